import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ErrorCode } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { isUniqueViolation, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import type { VariableDeclaration } from './placeholders.js';

interface SavedQueryRow {
  id: string;
  workspace_slug: string;
  resource: string;
  name: string;
  description: string | null;
  definition: Record<string, unknown>;
  variables: Record<string, VariableDeclaration>;
  legacy_placeholders: boolean;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface SavedQuery {
  id: string;
  name: string;
  description?: string;
  resource: string;
  query: Record<string, unknown>;
  variables: Record<string, VariableDeclaration>;
  /** True when the definition uses the deprecated `{{var}}` placeholders. */
  deprecatedPlaceholders: boolean;
  workspaceSlug: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

function toSavedQuery(row: SavedQueryRow): SavedQuery {
  return {
    id: row.id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    resource: row.resource,
    query: row.definition,
    variables: row.variables,
    deprecatedPlaceholders: row.legacy_placeholders,
    workspaceSlug: row.workspace_slug,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface NewSavedQuery {
  readonly resource: string;
  readonly name: string;
  readonly description: string | null;
  readonly definition: Record<string, unknown>;
  readonly variables: Record<string, VariableDeclaration>;
  readonly legacyPlaceholders: boolean;
  readonly actor: string;
}

/** data.saved_queries, always within one workspace. */
@Injectable()
export class SavedQueriesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(scope: WorkspaceScope, q: NewSavedQuery): Promise<SavedQuery> {
    try {
      const [row] = await this.db.query<SavedQueryRow[]>(
        `INSERT INTO data.saved_queries (id, workspace_slug, resource, name, description, definition, variables, legacy_placeholders, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
        [
          newUuid(),
          scope.workspace,
          q.resource,
          q.name,
          q.description,
          q.definition,
          q.variables,
          q.legacyPlaceholders,
          q.actor,
        ],
      );
      return toSavedQuery(row!);
    } catch (err) {
      if (isUniqueViolation(err))
        throw StrataException.conflict(`A saved query named '${q.name}' already exists for ${q.resource}`);
      throw err;
    }
  }

  async list(scope: WorkspaceScope, resource: string): Promise<SavedQuery[]> {
    const rows = await this.db.query<SavedQueryRow[]>(
      'SELECT * FROM data.saved_queries WHERE workspace_slug = $1 AND resource = $2 ORDER BY name',
      [scope.workspace, resource],
    );
    return rows.map(toSavedQuery);
  }

  /** A saved query of the workspace (of the collection `resource`, when given); 404 otherwise. */
  async get(scope: WorkspaceScope, id: string, resource?: string): Promise<SavedQuery> {
    const rows = await this.db.query<SavedQueryRow[]>(
      'SELECT * FROM data.saved_queries WHERE workspace_slug = $1 AND id = $2 AND ($3::text IS NULL OR resource = $3)',
      [scope.workspace, id, resource ?? null],
    );
    if (!rows[0]) throw StrataException.notFound(`Saved query ${id} not found`, ErrorCode.NOT_FOUND);
    return toSavedQuery(rows[0]);
  }
}

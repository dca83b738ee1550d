import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ErrorCode, type FieldError } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { isUniqueViolation } from '@strata/db';
import { StrataException, type Grants } from '@strata/platform';
import { findCollection } from '../../records/collection-lookup.js';
import { isPlainObject, show } from '../../schema/issues.js';
import { DataConfig } from '../../data.config.js';
import { QueryService, type QueryResult } from '../query.service.js';
import { checkComplexity } from '../complexity.js';
import { parseCanonical } from '../canonical.js';
import { resolveJoins } from '../joins.js';
import type { CreateSavedQueryRequest, TestSavedQueryRequest } from './dto/saved-query.requests.js';
import {
  fitsType,
  SAMPLE_VALUES,
  scanPlaceholders,
  substitute,
  VARIABLE_TYPES,
  type VariableDeclaration,
} from './placeholders.js';

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

/**
 * Saved queries: named canonical definitions whose values may be `${var}`
 * placeholders with declared types. A definition is checked against its
 * collection when it is saved (with a sample value of each variable's type), and
 * each execution checks the values given: a missing required variable is a 422,
 * a value of the wrong JavaScript type a 400 (no coercion).
 */
@Injectable()
export class SavedQueriesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly queries: QueryService,
    private readonly config: DataConfig,
  ) {}

  /** `earlier`: the body's own problems (checkBody), answered together with those of the definition. */
  async create(
    workspace: string,
    actor: string,
    body: CreateSavedQueryRequest,
    earlier: readonly FieldError[] = [],
  ): Promise<SavedQuery> {
    const { resource, variables, legacy } = await this.check(workspace, body.query, body.variables, earlier);
    try {
      const [row] = await this.db.query<SavedQueryRow[]>(
        `INSERT INTO data.saved_queries (id, workspace_slug, resource, name, description, definition, variables, legacy_placeholders, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
        [newUuid(), workspace, resource, body.name, body.description ?? null, body.query, variables, legacy, actor],
      );
      return toSavedQuery(row!);
    } catch (err) {
      if (isUniqueViolation(err))
        throw StrataException.conflict(`A saved query named '${body.name}' already exists for ${resource}`);
      throw err;
    }
  }

  async list(workspace: string, resource: string): Promise<{ results: SavedQuery[] }> {
    await findCollection(this.db.manager, workspace, { slug: resource });
    const rows = await this.db.query<SavedQueryRow[]>(
      'SELECT * FROM data.saved_queries WHERE workspace_slug = $1 AND resource = $2 ORDER BY name',
      [workspace, resource],
    );
    return { results: rows.map(toSavedQuery) };
  }

  async get(workspace: string, id: string, resource?: string): Promise<SavedQuery> {
    const rows = await this.db.query<SavedQueryRow[]>(
      'SELECT * FROM data.saved_queries WHERE workspace_slug = $1 AND id = $2 AND ($3::text IS NULL OR resource = $3)',
      [workspace, id, resource ?? null],
    );
    if (!rows[0]) throw StrataException.notFound(`Saved query ${id} not found`, ErrorCode.NOT_FOUND);
    return toSavedQuery(rows[0]);
  }

  async execute(
    workspace: string,
    grants: Grants,
    id: string,
    values: Readonly<Record<string, unknown>>,
    resource?: string,
  ): Promise<QueryResult> {
    const saved = await this.get(workspace, id, resource);
    return this.run(workspace, grants, saved.query, saved.variables, values);
  }

  /** Checks and runs a definition without saving it. */
  async test(
    workspace: string,
    grants: Grants,
    resource: string,
    body: TestSavedQueryRequest,
    earlier: readonly FieldError[] = [],
  ): Promise<QueryResult> {
    if (!isPlainObject(body.query)) throw StrataException.validation([...earlier]);
    const query = { ...body.query, resource: body.query['resource'] ?? resource };
    if (query.resource !== resource) {
      throw StrataException.validation([
        { field: 'query.resource', message: `must be ${resource}, the collection in the path` },
      ]);
    }
    const { variables } = await this.check(workspace, query, body.variables, earlier);
    return this.run(workspace, grants, query, variables, body.values ?? {});
  }

  private async run(
    workspace: string,
    grants: Grants,
    definition: Record<string, unknown>,
    declared: Readonly<Record<string, VariableDeclaration>>,
    given: Readonly<Record<string, unknown>>,
  ): Promise<QueryResult> {
    const values = new Map<string, unknown>();
    const missing: string[] = [];
    const problems: FieldError[] = [];
    for (const [name, decl] of Object.entries(declared)) {
      const value = Object.hasOwn(given, name) ? given[name] : decl.default;
      if (value === undefined) {
        if (decl.required !== false) missing.push(name);
        continue;
      }
      if (!fitsType(decl.type, value))
        problems.push({ field: `variables.${name}`, message: `must be a ${decl.type}, got ${show(value)}` });
      else values.set(name, value);
    }
    for (const name of Object.keys(given)) {
      if (!Object.hasOwn(declared, name))
        problems.push({ field: `variables.${name}`, message: 'is not a variable of this query' });
    }
    if (missing.length) {
      throw StrataException.unprocessable(
        `Missing required variable${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
        missing.map((name) => ({ field: `variables.${name}`, message: 'is required' })),
      );
    }
    if (problems.length) throw StrataException.validation(problems, 'Variables do not fit their declared types');
    return this.queries.runDefinition(workspace, grants, substitute(definition, values));
  }

  /**
   * Validates a definition and its declarations against the collection, with a
   * sample value per variable, and reports every problem at once: the body's own
   * (`earlier`), the declarations, the placeholders, and the definition's fields.
   */
  private async check(
    workspace: string,
    definition: Record<string, unknown> | undefined,
    rawVariables: Record<string, unknown> | undefined,
    earlier: readonly FieldError[] = [],
  ): Promise<{ resource: string; variables: Record<string, VariableDeclaration>; legacy: boolean }> {
    const problems: FieldError[] = [...earlier];
    const variables = declarations(rawVariables, problems);
    const scan = scanPlaceholders(definition);
    problems.push(...scan.problems);
    for (const name of scan.names) {
      if (!Object.hasOwn(variables, name))
        problems.push({ field: `variables.${name}`, message: 'is used in the query but not declared' });
    }
    const resource = definition?.['resource'];
    if (definition === undefined || typeof resource !== 'string') {
      if (definition !== undefined)
        problems.push({ field: 'query.resource', message: 'is required: the collection slug' });
      throw StrataException.validation(problems, 'The saved query is not valid');
    }
    checkComplexity(definition['where'], this.config.DATA_QUERY_MAX_CONDITIONS);
    const c = await findCollection(this.db.manager, workspace, { slug: resource });
    const sample = substitute(
      definition,
      new Map(Object.entries(variables).map(([n, d]) => [n, SAMPLE_VALUES[d.type]])),
    );
    if (!isPlainObject(sample)) throw StrataException.validation([{ field: 'query', message: 'must be an object' }]);
    const parseProblems: FieldError[] = [];
    parseCanonical(c, sample, parseProblems);
    await resolveJoins(this.db.manager, workspace, c, definition, this.queries.joinSettings(), parseProblems);
    // A part already reported (a placeholder where a field name goes) is not reported twice.
    const reported = problems.map((p) => p.field);
    const ownProblems = problems.length;
    for (const p of parseProblems) {
      const field = `query.${p.field}`;
      if (!reported.some((r) => field === r || field.startsWith(`${r}.`))) problems.push({ field, message: p.message });
    }
    if (problems.length) {
      throw StrataException.validation(
        problems,
        ownProblems === 0 ? 'The query does not fit its collection' : 'The saved query is not valid',
      );
    }
    return { resource, variables, legacy: scan.legacy };
  }
}

function declarations(
  raw: Record<string, unknown> | undefined,
  problems: FieldError[],
): Record<string, VariableDeclaration> {
  // A Map, then own properties: a variable may be called toString or valueOf.
  const out = new Map<string, VariableDeclaration>();
  for (const [name, value] of Object.entries(raw ?? {})) {
    const at = `variables.${name}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      problems.push({ field: at, message: 'is not a variable name' });
      continue;
    }
    if (!isPlainObject(value) || !(VARIABLE_TYPES as readonly unknown[]).includes(value['type'])) {
      problems.push({ field: `${at}.type`, message: `must be one of: ${VARIABLE_TYPES.join(', ')}` });
      continue;
    }
    const type = value['type'] as VariableDeclaration['type'];
    const required = value['required'];
    if (required !== undefined && typeof required !== 'boolean')
      problems.push({ field: `${at}.required`, message: 'must be a boolean' });
    const unknown = Object.keys(value).filter((k) => !['type', 'required', 'default'].includes(k));
    for (const key of unknown)
      problems.push({ field: `${at}.${key}`, message: 'is not a variable field (type, required, default)' });
    if (value['default'] !== undefined && !fitsType(type, value['default'])) {
      problems.push({ field: `${at}.default`, message: `must be a ${type}` });
    }
    out.set(name, {
      type,
      ...(required !== undefined ? { required: required === true } : {}),
      ...(value['default'] !== undefined ? { default: value['default'] } : {}),
    });
  }
  return Object.fromEntries(out);
}

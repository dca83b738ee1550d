import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { WorkspaceScope } from '@strata/db';

/** One saved version of a trigger, as compute.trigger_versions keeps it (metadata as stored: parameters sealed). */
export interface TriggerVersionRow {
  trigger_id: string;
  version: number;
  name: string;
  description: string | null;
  function_id: string | null;
  metadata: Record<string, unknown>;
  created_by: string;
  created_at: Date;
}

const COLUMNS = 'trigger_id, version, name, description, function_id, metadata, created_by, created_at';
/** Versions a list answers at most, newest first; older ones are read one by one. */
export const MAX_LISTED_VERSIONS = 1000;

/** compute.trigger_versions within one workspace: every create and update of a trigger, kept for audit. */
@Injectable()
export class TriggerVersionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The trigger's newest versions (at most MAX_LISTED_VERSIONS), newest first. */
  list(scope: WorkspaceScope, triggerId: string): Promise<TriggerVersionRow[]> {
    return this.db.query<TriggerVersionRow[]>(
      `SELECT ${COLUMNS} FROM compute.trigger_versions
        WHERE workspace_slug = $1 AND trigger_id = $2 ORDER BY version DESC LIMIT $3`,
      [scope.workspace, triggerId, MAX_LISTED_VERSIONS],
    );
  }

  async find(scope: WorkspaceScope, triggerId: string, version: number): Promise<TriggerVersionRow | undefined> {
    const [row] = await this.db.query<TriggerVersionRow[]>(
      `SELECT ${COLUMNS} FROM compute.trigger_versions
        WHERE workspace_slug = $1 AND trigger_id = $2 AND version = $3`,
      [scope.workspace, triggerId, version],
    );
    return row;
  }
}

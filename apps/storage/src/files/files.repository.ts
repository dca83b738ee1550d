import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { isUniqueViolation, managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { FileCursor, FileFilters, FileRow, FileSort } from './file.types.js';

const COLUMNS = `id, workspace_slug AS workspace, bucket, name, size::text AS size, content_type AS "contentType", sha256,
  visibility, metadata, link_collection AS "linkCollection", link_record_id AS "linkRecordId", status,
  object_key AS "objectKey", created_by AS "createdBy", created_at AS "createdAt", updated_at AS "updatedAt"`;

type Raw = Omit<FileRow, 'size'> & { size: string };
const rowOf = (r: Raw): FileRow => ({ ...r, size: Number(r.size) });

const SORT_COLUMNS: Record<string, string> = { createdAt: 'created_at', name: 'name', size: 'size' };

/** `LIKE` text matching `value` literally. */
const likeLiteral = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The result of an insert: stored, or another file of the bucket already has the name. */
export type Inserted = 'inserted' | 'name-taken';

/** storage.files, within one workspace. */
@Injectable()
export class FilesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(scope: WorkspaceScope, tx: Tx, f: Omit<FileRow, 'workspace'>): Promise<Inserted> {
    const manager = managerOf(this.db, tx);
    // A savepoint, so that a taken name leaves the transaction usable for the caller's next statement.
    await manager.query('SAVEPOINT file_insert');
    try {
      await manager.query(
        `INSERT INTO storage.files (id, workspace_slug, bucket, name, size, content_type, sha256, visibility, metadata,
           link_collection, link_record_id, status, object_key, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text::jsonb, $10, $11, $12, $13, $14, $15, $16)`,
        [
          f.id,
          scope.workspace,
          f.bucket,
          f.name,
          f.size,
          f.contentType,
          f.sha256,
          f.visibility,
          JSON.stringify(f.metadata),
          f.linkCollection,
          f.linkRecordId,
          f.status,
          f.objectKey,
          f.createdBy,
          f.createdAt,
          f.updatedAt,
        ],
      );
      await manager.query('RELEASE SAVEPOINT file_insert');
      return 'inserted';
    } catch (err) {
      await manager.query('ROLLBACK TO SAVEPOINT file_insert');
      if (isUniqueViolation(err, 'files_name_idx')) return 'name-taken';
      throw err;
    }
  }

  async find(scope: WorkspaceScope, id: string): Promise<FileRow | undefined> {
    const [row] = rowsOf<Raw>(
      await this.db.query(`SELECT ${COLUMNS} FROM storage.files WHERE workspace_slug = $1 AND id = $2`, [
        scope.workspace,
        id,
      ]),
    );
    return row && rowOf(row);
  }

  async nameTaken(scope: WorkspaceScope, bucket: string, name: string): Promise<boolean> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query('SELECT id FROM storage.files WHERE workspace_slug = $1 AND bucket = $2 AND name = $3', [
        scope.workspace,
        bucket,
        name,
      ]),
    );
    return rows.length > 0;
  }

  /** Deletes the file's row; its object key (for the purge), or undefined when there was none. */
  async delete(scope: WorkspaceScope, tx: Tx, id: string): Promise<string | undefined> {
    const [row] = rowsOf<{ object_key: string }>(
      await managerOf(this.db, tx).query(
        'DELETE FROM storage.files WHERE workspace_slug = $1 AND id = $2 RETURNING object_key',
        [scope.workspace, id],
      ),
    );
    return row?.object_key;
  }

  /**
   * One page of files (one more row than `limit`, to tell whether another follows),
   * the folders below the prefix when a delimiter is given, and the count when asked.
   */
  async list(
    scope: WorkspaceScope,
    filters: FileFilters,
    sort: FileSort,
    limit: number,
    after: FileCursor | undefined,
    count: boolean,
  ): Promise<{ rows: FileRow[]; prefixes: string[]; total: number | undefined }> {
    const where: string[] = ['workspace_slug = $1'];
    const params: unknown[] = [scope.workspace];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filters.bucket !== undefined) add((p) => `bucket = ${p}`, filters.bucket);
    const prefix = filters.prefix ?? '';
    if (prefix) add((p) => `name LIKE ${p}`, `${likeLiteral(prefix)}%`);
    if (filters.contains !== undefined) add((p) => `strpos(lower(name), lower(${p})) > 0`, filters.contains);
    if (filters.contentType !== undefined) {
      if (filters.contentType.endsWith('/*'))
        add((p) => `content_type LIKE ${p}`, `${likeLiteral(filters.contentType.slice(0, -1))}%`);
      else add((p) => `content_type = ${p}`, filters.contentType);
    }
    if (filters.linkCollection !== undefined) add((p) => `link_collection = ${p}`, filters.linkCollection);
    if (filters.linkRecordId !== undefined) add((p) => `link_record_id = ${p}`, filters.linkRecordId);
    if (filters.createdAfter !== undefined) add((p) => `created_at >= ${p}`, filters.createdAfter);
    if (filters.createdBefore !== undefined) add((p) => `created_at <= ${p}`, filters.createdBefore);
    const matching = [...where];
    const matchingParams = [...params];
    let prefixes: string[] = [];
    if (filters.delimiter === '/') {
      // Names with a `/` after the prefix are folders: listed once each, not as files.
      params.push(prefix.length);
      const rest = `substr(name, $${params.length} + 1)`;
      const folders = rowsOf<{ p: string }>(
        await this.db.query(
          `SELECT DISTINCT left(name, $${params.length} + strpos(${rest}, '/')) AS p FROM storage.files
            WHERE ${where.join(' AND ')} AND strpos(${rest}, '/') > 0 ORDER BY p LIMIT 1000`,
          params,
        ),
      );
      prefixes = folders.map((f) => f.p);
      where.push(`strpos(${rest}, '/') = 0`);
      matching.push(`strpos(substr(name, $${params.length} + 1), '/') = 0`);
      matchingParams.push(prefix.length);
    }
    const desc = sort.startsWith('-');
    const column = SORT_COLUMNS[desc ? sort.slice(1) : sort]!;
    if (after) {
      params.push(after.value, after.id);
      where.push(`(${column}, id) ${desc ? '<' : '>'} ($${params.length - 1}, $${params.length}::uuid)`);
    }
    params.push(limit + 1);
    const dir = desc ? 'DESC' : 'ASC';
    const rows = rowsOf<Raw>(
      await this.db.query(
        `SELECT ${COLUMNS} FROM storage.files WHERE ${where.join(' AND ')}
          ORDER BY ${column} ${dir}, id ${dir} LIMIT $${params.length}`,
        params,
      ),
    ).map(rowOf);
    let total: number | undefined;
    if (count) {
      const [n] = rowsOf<{ n: number }>(
        await this.db.query(
          `SELECT count(*)::int AS n FROM storage.files WHERE ${matching.join(' AND ')}`,
          matchingParams,
        ),
      );
      total = n?.n ?? 0;
    }
    return { rows, prefixes, total };
  }
}

import { Injectable } from '@nestjs/common';
import { afterCommit, Transactions, type WorkspaceScope } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import { BucketsService } from '../buckets/buckets.service.js';
import { signLink } from '../downloads/signed-links.js';
import { PurgeSweeper } from '../purge/purge-sweeper.js';
import { PurgesRepository } from '../purge/purges.repository.js';
import type { FileListQuery } from './dto/file-list.query.js';
import type { SignRequest } from './dto/sign.request.js';
import { fileView, SORTS, type FileCursor, type FileRow, type FileSort, type FileView } from './file.types.js';
import { FilesRepository } from './files.repository.js';

export const FILE_NOT_FOUND = 'File not found.';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A cursor: the sort it belongs to, the last row's sort value and id. */
function encodeCursor(sort: FileSort, c: FileCursor): string {
  return Buffer.from(JSON.stringify([sort, c.value, c.id])).toString('base64url');
}

function decodeCursor(sort: FileSort, text: string): FileCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    !SORTS.includes(parsed[0] as FileSort) ||
    (typeof parsed[1] !== 'string' && typeof parsed[1] !== 'number') ||
    typeof parsed[2] !== 'string' ||
    !UUID.test(parsed[2])
  ) {
    throw StrataException.invalid('cursor', 'cursor is not a cursor of this list');
  }
  if (parsed[0] !== sort) throw StrataException.invalid('cursor', 'cursor belongs to another sort');
  return { value: parsed[1], id: parsed[2] };
}

/** Files: metadata, lists, deletes and signed links. */
@Injectable()
export class FilesService {
  constructor(
    private readonly files: FilesRepository,
    private readonly purges: PurgesRepository,
    private readonly buckets: BucketsService,
    private readonly transactions: Transactions,
    private readonly sweeper: PurgeSweeper,
    private readonly clock: Clock,
  ) {}

  /** The file, or 404 (an id of another workspace is not found either). */
  async require(scope: WorkspaceScope, id: string): Promise<FileRow> {
    const found = UUID.test(id) ? await this.files.find(scope, id.toLowerCase()) : undefined;
    if (!found) throw StrataException.notFound(FILE_NOT_FOUND);
    return found;
  }

  async list(scope: WorkspaceScope, q: FileListQuery) {
    const sort = q.sort ?? '-createdAt';
    const limit = q.limit ?? 20;
    const after = q.cursor !== undefined ? decodeCursor(sort, q.cursor) : undefined;
    const { rows, prefixes, total } = await this.files.list(
      scope,
      {
        bucket: q.bucket,
        prefix: q.prefix,
        delimiter: q.delimiter,
        contains: q.contains,
        contentType: q.contentType,
        linkCollection: q.linkCollection,
        linkRecordId: q.linkRecordId?.toLowerCase(),
        createdAfter: q.createdAfter ? new Date(q.createdAfter) : undefined,
        createdBefore: q.createdBefore ? new Date(q.createdBefore) : undefined,
      },
      sort,
      limit,
      after,
      q.includeCount === true,
    );
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const last = page.at(-1);
    const key = sort.replace('-', '') as 'createdAt' | 'name' | 'size';
    const nextCursor =
      hasMore && last
        ? encodeCursor(sort, { value: key === 'createdAt' ? last.createdAt.toISOString() : last[key], id: last.id })
        : null;
    return {
      results: page.map(fileView),
      ...(q.delimiter ? { prefixes } : {}),
      pagination: { limit, total: total ?? null, hasMore, nextCursor },
    };
  }

  /** Deletes the row at once (reads stop finding it) and queues its bytes for the purge sweep. */
  async delete(scope: WorkspaceScope, id: string): Promise<void> {
    if (!UUID.test(id)) throw StrataException.notFound(FILE_NOT_FOUND);
    await this.transactions.run(async (tx) => {
      const objectKey = await this.files.delete(scope, tx, id.toLowerCase());
      if (objectKey === undefined) throw StrataException.notFound(FILE_NOT_FOUND);
      await this.purges.schedule(scope, tx, objectKey, this.clock.now());
      afterCommit(tx, () => this.sweeper.wake());
    });
  }

  /** A URL that serves the file without a credential until `expiresIn` seconds from now. */
  async sign(scope: WorkspaceScope, id: string, body: SignRequest, storageBase: string) {
    const file = await this.require(scope, id);
    const bucket = await this.buckets.require(scope, undefined, file.bucket);
    const expires = Math.floor(this.clock.now().getTime() / 1000) + (body.expiresIn ?? 3600);
    const signature = signLink(this.buckets.linkKeyOf(bucket), {
      workspace: scope.workspace,
      fileId: file.id,
      expires,
    });
    const query = new URLSearchParams({ expires: String(expires), signature });
    if (body.download === true) query.set('download', 'true');
    return {
      url: `${storageBase}/signed/files/${file.id}?${query.toString()}`,
      expiresAt: new Date(expires * 1000).toISOString(),
    };
  }

  view(file: FileRow): FileView {
    return fileView(file);
  }
}

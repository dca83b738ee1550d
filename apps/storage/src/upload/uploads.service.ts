import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import { ErrorCode } from '@strata/contracts';
import { Transactions, type WorkspaceScope } from '@strata/db';
import { Clock, IdempotencyKeys, keyRingOf, StrataException } from '@strata/platform';
import type { KeyRing } from '@strata/crypto';
import { BucketsService } from '../buckets/buckets.service.js';
import { DEFAULT_BUCKET, type BucketRow } from '../buckets/bucket.types.js';
import { typeAllowed } from '../buckets/type-allowlist.js';
import { StorageDriver } from '../drivers/storage-driver.js';
import { fileView, type FileRow, type FileView } from '../files/file.types.js';
import { FilesRepository } from '../files/files.repository.js';
import { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import { PurgesRepository } from '../purge/purges.repository.js';
import { StorageConfig } from '../storage.config.js';
import { sanitiseOriginalName } from './file-name.js';
import { Ingest } from './ingest.js';
import { receiveUpload, type FilePartInfo } from './multipart.js';
import { sniffType } from './sniff.js';
import { checkUploadFields } from './upload-fields.js';

/** An upload's answer: 201 with the file, or the first answer again for a repeated Idempotency-Key. */
export interface UploadAnswer {
  readonly status: number;
  readonly body: FileView;
}

/** What an upload streamed and where, before its row is written. */
interface Streamed {
  readonly row: Omit<FileRow, 'workspace'>;
  readonly objectKey: string;
}

/**
 * `POST /upload`: streams the file part through the checks (size, type, SHA-256) to
 * the driver's atomic write, then writes the file's row. The upload's purge guard is
 * written before the first byte and removed in the row's transaction, so bytes without
 * a row never outlive a failure: removed at once when the failure is seen, by the
 * purge sweep after a crash.
 */
@Injectable()
export class UploadsService {
  private readonly logger = new Logger('Uploads');
  private readonly ring: KeyRing;

  constructor(
    private readonly config: StorageConfig,
    private readonly clock: Clock,
    private readonly buckets: BucketsService,
    private readonly files: FilesRepository,
    private readonly purges: PurgesRepository,
    private readonly answers: IdempotencyRepository,
    private readonly transactions: Transactions,
    private readonly driver: StorageDriver,
  ) {
    this.ring = keyRingOf(config);
  }

  async upload(
    scope: WorkspaceScope,
    createdBy: string,
    req: IncomingMessage,
    idempotencyKey: string | undefined,
  ): Promise<UploadAnswer> {
    if (idempotencyKey !== undefined) IdempotencyKeys.check(idempotencyKey);
    const contentType = req.headers['content-type'] ?? '';
    if (!/^multipart\/form-data\s*;/i.test(contentType)) {
      throw new StrataException(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        'Uploads are multipart/form-data, with the file in a part named file.',
      );
    }
    let streamed: Streamed | undefined;
    try {
      streamed = await receiveUpload(
        req,
        {
          fieldBytes: this.config.STORAGE_MAX_METADATA_BYTES + 1024,
          fileBytes: this.config.STORAGE_MAX_FILE_BYTES + 1,
        },
        async (raw, file, info) => {
          const prepared = await this.prepare(scope, createdBy, raw, info, file, idempotencyKey !== undefined);
          streamed = prepared.streamed;
          await prepared.write();
          return prepared.streamed;
        },
      );
      return await this.commit(scope, streamed, idempotencyKey);
    } catch (err) {
      if (streamed) await this.discard(scope, streamed.objectKey);
      throw err;
    }
  }

  /**
   * Checks the fields and the bucket (before any byte of the file is read), writes the
   * upload's purge guard, and answers how to stream the file to the driver.
   */
  private async prepare(
    scope: WorkspaceScope,
    createdBy: string,
    raw: ReadonlyMap<string, string>,
    info: FilePartInfo,
    file: Readable,
    idempotent: boolean,
  ): Promise<{ streamed: Streamed; write: () => Promise<void> }> {
    const { fields, errors } = checkUploadFields(raw, this.config.STORAGE_MAX_METADATA_BYTES);
    let bucket: BucketRow | undefined;
    if (fields.bucket === undefined || !errors.some((e) => e.field === 'bucket')) {
      try {
        bucket = await this.buckets.require(scope, undefined, fields.bucket ?? DEFAULT_BUCKET);
      } catch {
        errors.push({ field: 'bucket', message: `no bucket named '${fields.bucket ?? DEFAULT_BUCKET}'` });
      }
    }
    if (errors.length || !bucket) throw StrataException.validation(errors);
    const name = fields.name ?? sanitiseOriginalName(info.filename);
    // Refused before any byte is read; with an Idempotency-Key the repeat of a stored upload is answered instead.
    if (!idempotent && (await this.files.nameTaken(scope, bucket.name, name))) throw this.nameTaken(bucket.name, name);
    const id = randomUUID();
    const objectKey = `${scope.workspace}/${id}`;
    const now = this.clock.now();
    let detected = 'application/octet-stream';
    const allowed = bucket.allowedTypes;
    const ingest = new Ingest(bucket.maxFileBytes, async (head) => {
      detected = await sniffType(head, info.mimeType);
      if (!typeAllowed(detected, allowed)) {
        const message = `Files of type ${detected} are not allowed in bucket '${bucket.name}' (allowed: ${allowed.join(', ')}).`;
        throw new StrataException(ErrorCode.UNSUPPORTED_MEDIA_TYPE, message, [{ field: 'file', message }]);
      }
    });
    await this.purges.guardUpload(
      scope,
      objectKey,
      new Date(now.getTime() + this.config.STORAGE_UPLOAD_ABANDON_AFTER_MS),
      now,
    );
    const row: Omit<FileRow, 'workspace'> = {
      id,
      bucket: bucket.name,
      name,
      size: 0,
      contentType: detected,
      sha256: '',
      visibility: fields.visibility ?? bucket.defaultVisibility,
      metadata: fields.metadata,
      linkCollection: fields.link?.collection ?? null,
      linkRecordId: fields.link?.recordId ?? null,
      status: 'ready',
      objectKey,
      createdBy,
      createdAt: now,
      updatedAt: now,
    };
    const streamed: { row: Omit<FileRow, 'workspace'>; objectKey: string } = { row, objectKey };
    return {
      streamed,
      write: async () => {
        file.on('error', (err) => ingest.destroy(err));
        // Its error (413, 415, the client gone) is the driver's to see, even before its write starts.
        ingest.on('error', () => undefined);
        await this.driver.put(objectKey, file.pipe(ingest));
        const { size, sha256 } = ingest.result();
        streamed.row = { ...row, size, sha256, contentType: detected };
      },
    };
  }

  /** Writes the row (or answers a repeated key's first answer), removing the guard in the same transaction. */
  private async commit(scope: WorkspaceScope, streamed: Streamed, key: string | undefined): Promise<UploadAnswer> {
    const { row, objectKey } = streamed;
    const canonical = JSON.stringify([
      row.bucket,
      row.name,
      row.visibility,
      row.metadata,
      row.linkCollection,
      row.linkRecordId,
      row.size,
      row.sha256,
    ]);
    const answer = await this.transactions.run(async (tx) => {
      if (key !== undefined) {
        await this.answers.lock(scope, tx, key);
        const stored = await this.answers.find<FileView>(scope, tx, key, this.config.STORAGE_IDEMPOTENCY_WINDOW_HOURS);
        if (stored) {
          if (!(this.ring.verifyMac(canonical, stored.request_hash) ?? true)) throw IdempotencyKeys.reused();
          return { status: stored.status, body: stored.response, replayed: true };
        }
      }
      if ((await this.files.insert(scope, tx, row)) === 'name-taken') throw this.nameTaken(row.bucket, row.name);
      if (!(await this.purges.releaseUpload(scope, tx, objectKey))) {
        throw new StrataException(
          ErrorCode.UNAVAILABLE,
          'The upload took longer than STORAGE_UPLOAD_ABANDON_AFTER_MS and was discarded; send it again.',
        );
      }
      const body = fileView({ ...row, workspace: scope.workspace });
      if (key !== undefined) await this.answers.store(scope, tx, key, this.ring.mac(canonical), 201, body);
      return { status: 201, body, replayed: false };
    });
    // A repeat's bytes are not kept: the first upload's file is the answer.
    if (answer.replayed) await this.discard(scope, objectKey);
    return { status: answer.status, body: answer.body };
  }

  /** Removes an upload's bytes and its guard; a failure here is left to the purge sweep (the guard stays). */
  private async discard(scope: WorkspaceScope, objectKey: string): Promise<void> {
    try {
      await this.driver.delete(objectKey);
      await this.purges.releaseUpload(scope, undefined, objectKey);
    } catch (err) {
      this.logger.warn({ msg: 'upload bytes left for the purge sweep', err: String(err) });
    }
  }

  private nameTaken(bucket: string, name: string): StrataException {
    return new StrataException(
      ErrorCode.DUPLICATE_KEY,
      `A file named '${name}' already exists in bucket '${bucket}'.`,
      [{ field: 'name', message: 'a file of the bucket already has this name' }],
    );
  }
}

import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { ErrorCode } from '@strata/contracts';
import { StrataException } from '@strata/platform';
import { SNIFF_BYTES } from './sniff.js';

/** What the bytes turned out to be once they have all passed. */
export interface Ingested {
  readonly size: number;
  readonly sha256: string;
}

/** The 413 of a file past its bucket's limit. */
export function tooLarge(limit: number): StrataException {
  const message = `The file is larger than the bucket allows (${limit} bytes).`;
  return new StrataException(ErrorCode.PAYLOAD_TOO_LARGE, message, [{ field: 'file', message }]);
}

/**
 * The checks an upload's bytes pass through on their way to the driver, chunk by
 * chunk: the size limit (the stream fails with a 413 at the first byte past it), the
 * SHA-256, and the type: the first {@link SNIFF_BYTES} are held back (the only bytes
 * ever held) until `onHead` has judged them, which may fail the stream with a 415.
 */
export class Ingest extends Transform {
  private size = 0;
  private readonly hash: Hash = createHash('sha256');
  private head: Buffer[] = [];
  private headBytes = 0;
  private judged = false;

  constructor(
    private readonly limit: number,
    private readonly onHead: (head: Buffer) => Promise<void>,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.limit) return done(tooLarge(this.limit));
    this.hash.update(chunk);
    if (this.judged) return done(null, chunk);
    this.head.push(chunk);
    this.headBytes += chunk.length;
    if (this.headBytes < SNIFF_BYTES) return done();
    this.judge(done);
  }

  override _flush(done: TransformCallback): void {
    if (this.judged) return done();
    this.judge(done);
  }

  /** Once the stream has ended: its size and SHA-256. */
  result(): Ingested {
    return { size: this.size, sha256: this.hash.digest('hex') };
  }

  private judge(done: TransformCallback): void {
    const head = Buffer.concat(this.head);
    this.head = [];
    this.judged = true;
    this.onHead(head).then(
      () => done(null, head),
      (err: unknown) => done(err as Error),
    );
  }
}

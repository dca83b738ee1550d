import type { IncomingMessage } from 'node:http';
import { ErrorCode } from '@strata/contracts';
import { StrataException } from '../errors/strata.exception.js';

/**
 * Reads the body as sent, up to `limit` bytes (413 beyond, without reading the
 * rest into memory). An absent body is an empty buffer.
 */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, size);
}

function tooLarge(limit: number): StrataException {
  return new StrataException(ErrorCode.PAYLOAD_TOO_LARGE, `Request body is larger than ${limit} bytes.`);
}

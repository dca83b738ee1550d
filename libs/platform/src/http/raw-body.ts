import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
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

/** The Content-Encodings a raw body may arrive in, as the JSON parser of every other route takes them. */
const DECODERS: Readonly<Record<string, (body: Buffer, options: { maxOutputLength: number }) => Buffer>> = {
  gzip: zlib.gunzipSync,
  'x-gzip': zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync,
};

/**
 * A raw body with its `Content-Encoding` undone (at most `limit` bytes once
 * decoded: 413 beyond). An encoding it does not know is a 415, a body that does
 * not decode a 400 naming Content-Encoding, as on every route that parses JSON.
 */
export function decodeContentEncoding(req: IncomingMessage, body: Buffer, limit: number): Buffer {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return body;
  const decode = DECODERS[encoding];
  if (!decode) {
    throw new StrataException(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `Content-Encoding '${encoding}' is not supported`, [
      { field: 'Content-Encoding', message: 'must be gzip, deflate, br or identity' },
    ]);
  }
  try {
    return decode(body, { maxOutputLength: limit });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit);
    throw undecodable(encoding);
  }
}

/** The 400 of a body whose Content-Encoding does not decode, on raw routes and on the JSON parser's. */
export function undecodable(encoding: string): StrataException {
  return StrataException.validation(
    [{ field: 'Content-Encoding', message: `The body is not valid ${encoding} (Content-Encoding)` }],
    'Request body could not be decompressed',
  );
}

import type { IncomingMessage } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@strata/contracts';
import { decodeContentEncoding } from './raw-body.js';

const sent = (encoding?: string) => ({ headers: encoding ? { 'content-encoding': encoding } : {} }) as IncomingMessage;
const json = Buffer.from('{"a":1}');

describe('decodeContentEncoding', () => {
  it('undoes gzip, deflate and br, and leaves a body without an encoding as it is', () => {
    expect(decodeContentEncoding(sent('gzip'), gzipSync(json), 1000)).toEqual(json);
    expect(decodeContentEncoding(sent(' GZIP '), gzipSync(json), 1000)).toEqual(json);
    expect(decodeContentEncoding(sent('deflate'), deflateSync(json), 1000)).toEqual(json);
    expect(decodeContentEncoding(sent('br'), brotliCompressSync(json), 1000)).toEqual(json);
    expect(decodeContentEncoding(sent(), json, 1000)).toBe(json);
    expect(decodeContentEncoding(sent('identity'), json, 1000)).toBe(json);
  });

  it('refuses a body that does not decode (400), one too large once decoded (413), and an unknown encoding (415)', () => {
    const refusal = (encoding: string, body: Buffer, limit = 1000) => {
      try {
        decodeContentEncoding(sent(encoding), body, limit);
      } catch (err) {
        return (err as { code: ErrorCode }).code;
      }
      return 'decoded';
    };
    expect(refusal('gzip', Buffer.from('not gzip'))).toBe(ErrorCode.VALIDATION_ERROR);
    expect(refusal('gzip', gzipSync(json).subarray(0, 10))).toBe(ErrorCode.VALIDATION_ERROR);
    expect(refusal('br', Buffer.from('not brotli'))).toBe(ErrorCode.VALIDATION_ERROR);
    expect(refusal('gzip', gzipSync(Buffer.alloc(5000)), 1000)).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
    expect(refusal('bogus', json)).toBe(ErrorCode.UNSUPPORTED_MEDIA_TYPE);
    expect(refusal('gzip, br', json)).toBe(ErrorCode.UNSUPPORTED_MEDIA_TYPE);
  });
});

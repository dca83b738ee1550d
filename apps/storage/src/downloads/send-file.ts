import type { Response, Request } from 'express';
import { pipeline } from 'node:stream/promises';
import { ErrorCode } from '@strata/contracts';
import { StrataException } from '@strata/platform';
import type { StorageDriver } from '../drivers/storage-driver.js';
import { etagOf, type FileRow } from '../files/file.types.js';
import { parseRange } from './byte-range.js';
import { contentDisposition } from './disposition.js';

/** Whether `If-None-Match` names the file's ETag (or `*`). */
function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/**
 * Sends a file's bytes: 304 for a matching `If-None-Match`, 206 for one satisfiable
 * range, 416 for one outside the file, 200 otherwise; always `nosniff`, a
 * `Content-Disposition` that shows only safe types inline, and a CSP sandbox, so no
 * uploaded file runs script on this origin.
 */
export async function sendFile(
  req: Request,
  res: Response,
  driver: StorageDriver,
  file: FileRow,
  options: { download: boolean; cacheControl: string },
): Promise<void> {
  const etag = etagOf(file);
  res.setHeader('ETag', etag);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Cache-Control', options.cacheControl);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
  if (notModified(req.headers['if-none-match'], etag)) {
    res.status(304).end();
    return;
  }
  const ifRange = req.headers['if-range'];
  const ask =
    ifRange !== undefined && ifRange !== etag ? { kind: 'whole' as const } : parseRange(req.headers.range, file.size);
  if (ask.kind === 'unsatisfiable') {
    throw new StrataException(ErrorCode.RANGE_NOT_SATISFIABLE, 'The range is outside the file.', undefined, {
      'Content-Range': `bytes */${file.size}`,
    });
  }
  const span = ask.kind === 'part' ? { start: ask.start, end: ask.end } : undefined;
  const stream = await driver.get(file.objectKey, span);
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Disposition', contentDisposition(file.name, file.contentType, options.download));
  if (span) {
    res.status(206);
    res.setHeader('Content-Range', `bytes ${span.start}-${span.end}/${file.size}`);
    res.setHeader('Content-Length', String(span.end - span.start + 1));
  } else {
    res.status(200);
    res.setHeader('Content-Length', String(file.size));
  }
  if (req.method === 'HEAD') {
    stream.destroy();
    res.end();
    return;
  }
  await pipeline(stream, res).catch(() => {
    // The client went away mid-download: nothing to answer.
  });
}

import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { ErrorCode } from '@strata/contracts';
import { StrataException } from '@strata/platform';

/** What the file part says of itself. */
export interface FilePartInfo {
  readonly filename: string | undefined;
  readonly mimeType: string | undefined;
}

export interface MultipartLimits {
  /** Largest text field, in bytes. */
  readonly fieldBytes: number;
  /** Largest file the parser lets through (the bucket's own limit is the Ingest's). */
  readonly fileBytes: number;
}

const MAX_FIELDS = 10;

/**
 * Reads a `multipart/form-data` upload as it arrives (busboy): the text fields, which
 * must come before the one `file` part, then the file, handed to `onFile` as a stream
 * with the fields read so far. Settles once the body has ended and `onFile` has: with
 * its answer, or its error, or a 400 for a malformed body (cut in the middle, a field
 * after the file, no file). The body is never held: `onFile` reads the file part as
 * it streams.
 */
export function receiveUpload<T>(
  req: IncomingMessage,
  limits: MultipartLimits,
  onFile: (fields: ReadonlyMap<string, string>, file: Readable, info: FilePartInfo) => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        preservePath: true,
        limits: {
          fields: MAX_FIELDS,
          fieldSize: limits.fieldBytes,
          fieldNameSize: 100,
          files: 1,
          parts: MAX_FIELDS + 1,
          fileSize: limits.fileBytes,
        },
      });
    } catch (err) {
      reject(malformed(`The body is not multipart/form-data (${(err as Error).message}).`));
      return;
    }
    const fields = new Map<string, string>();
    let failure: Error | undefined;
    let fileWork: Promise<T> | undefined;
    let file: Readable | undefined;
    let ended = false;
    const fail = (err: Error) => {
      if (failure !== undefined) return;
      failure = err;
      file?.destroy(err);
      req.unpipe(parser);
      // The rest of the body is read and dropped (never kept), so the answer can be sent.
      req.resume();
      if (!fileWork) reject(err);
    };
    parser.on('field', (name, value, info) => {
      if (fileWork) return fail(StrataException.invalid(name, `${name} must come before the file part`));
      if (info.valueTruncated)
        return fail(StrataException.invalid(name, `${name} must be at most ${limits.fieldBytes} bytes`));
      if (fields.has(name)) return fail(StrataException.invalid(name, `${name} appears more than once`));
      fields.set(name, value);
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || fileWork) {
        stream.resume();
        return fail(
          StrataException.invalid(
            name,
            name === 'file' ? 'only one file per upload' : `unexpected file field ${name} (the file goes in 'file')`,
          ),
        );
      }
      file = stream;
      stream.on('limit', () => stream.destroy(new Error('file past the parser limit')));
      fileWork = onFile(fields, stream, { filename: info.filename, mimeType: info.mimeType });
      fileWork.then(
        (value) => {
          if (failure !== undefined) return reject(failure);
          if (ended) return resolve(value);
          parser.once('close', () => (failure !== undefined ? reject(failure) : resolve(value)));
        },
        (err: unknown) => {
          failure ??= err instanceof Error ? err : new Error(String(err));
          req.unpipe(parser);
          req.resume();
          reject(failure);
        },
      );
    });
    parser.on('filesLimit', () => fail(StrataException.invalid('file', 'only one file per upload')));
    parser.on('fieldsLimit', () => fail(malformed(`At most ${MAX_FIELDS} fields.`)));
    parser.on('partsLimit', () => fail(malformed(`At most ${MAX_FIELDS + 1} parts.`)));
    parser.on('error', (err: Error) =>
      fail(malformed(`The multipart body is malformed or was cut short (${err.message}).`)),
    );
    parser.on('close', () => {
      ended = true;
      if (!fileWork && failure === undefined) {
        reject(StrataException.validation([{ field: 'file', message: 'file is required (a part named file)' }]));
      }
    });
    req.on('aborted', () => fail(malformed('The client ended the upload before the body was complete.')));
    req.on('close', () => {
      if (!req.complete) fail(malformed('The client ended the upload before the body was complete.'));
    });
    req.pipe(parser);
  });
}

function malformed(message: string): StrataException {
  return new StrataException(ErrorCode.VALIDATION_ERROR, message, [{ field: 'body', message }]);
}

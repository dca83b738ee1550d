import { COLLECTION_SLUG, type FieldError } from '@strata/contracts';
import { VISIBILITIES, type Visibility } from '../buckets/bucket.types.js';
import { BUCKET_NAME } from '../buckets/dto/bucket.requests.js';
import type { FileLink } from '../files/file.types.js';
import { nameProblem } from './file-name.js';

/** The text fields an upload may carry, before its `file` part. */
export const UPLOAD_FIELDS = ['bucket', 'name', 'visibility', 'metadata', 'link'] as const;

/** The upload's fields, checked. */
export interface UploadFields {
  readonly bucket: string | undefined;
  readonly name: string | undefined;
  readonly visibility: Visibility | undefined;
  readonly metadata: Record<string, unknown>;
  readonly link: FileLink | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks an upload's text fields: one `details` entry per bad field. `metadata` is a
 * JSON object of at most `maxMetadataBytes`; `link` a JSON object
 * `{collection, recordId}` (a collection slug and a UUID). Pure.
 */
export function checkUploadFields(
  raw: ReadonlyMap<string, string>,
  maxMetadataBytes: number,
): { fields: UploadFields; errors: FieldError[] } {
  const errors: FieldError[] = [];
  for (const key of raw.keys()) {
    if (!(UPLOAD_FIELDS as readonly string[]).includes(key)) {
      errors.push({
        field: key,
        message: `property ${key} should not exist (fields: file, ${UPLOAD_FIELDS.join(', ')})`,
      });
    }
  }
  const bucket = raw.get('bucket');
  if (bucket !== undefined && !BUCKET_NAME.test(bucket)) {
    errors.push({ field: 'bucket', message: 'bucket must be 1 to 63 lowercase letters, digits or hyphens' });
  }
  const name = raw.get('name');
  const problem = name === undefined ? undefined : nameProblem(name);
  if (problem) errors.push({ field: 'name', message: `name ${problem}` });
  const visibility = raw.get('visibility');
  if (visibility !== undefined && !(VISIBILITIES as readonly string[]).includes(visibility)) {
    errors.push({ field: 'visibility', message: `visibility must be one of ${VISIBILITIES.join(', ')}` });
  }
  let metadata: Record<string, unknown> = {};
  const metadataText = raw.get('metadata');
  if (metadataText !== undefined) {
    const parsed = parseJson(metadataText);
    if (Buffer.byteLength(metadataText, 'utf8') > maxMetadataBytes) {
      errors.push({ field: 'metadata', message: `metadata must be at most ${maxMetadataBytes} bytes of JSON` });
    } else if (!isObject(parsed)) {
      errors.push({ field: 'metadata', message: 'metadata must be a JSON object' });
    } else {
      metadata = parsed;
    }
  }
  let link: FileLink | null = null;
  const linkText = raw.get('link');
  if (linkText !== undefined) {
    const parsed = parseJson(linkText);
    const keys = isObject(parsed) ? Object.keys(parsed).sort().join(',') : '';
    if (
      !isObject(parsed) ||
      keys !== 'collection,recordId' ||
      typeof parsed['collection'] !== 'string' ||
      !COLLECTION_SLUG.test(parsed['collection']) ||
      typeof parsed['recordId'] !== 'string' ||
      !UUID.test(parsed['recordId'])
    ) {
      errors.push({
        field: 'link',
        message: 'link must be a JSON object {collection: <collection slug>, recordId: <uuid>}',
      });
    } else {
      link = { collection: parsed['collection'], recordId: parsed['recordId'].toLowerCase() };
    }
  }
  return {
    fields: { bucket, name, visibility: visibility as Visibility | undefined, metadata, link },
    errors,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

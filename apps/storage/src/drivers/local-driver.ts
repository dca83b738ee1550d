import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StorageDriver, type ByteSpan } from './storage-driver.js';

/** A key the service makes: `<workspace>/<uuid>`. Anything else is refused, so no key walks out of the root. */
const KEY = /^[a-z0-9][a-z0-9-]{0,99}\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Files in a directory (STORAGE_LOCAL_DIR): `objects/<workspace>/<2 hex>/<id>`. A write
 * goes to `partial/<hash of the key>` first, is fsynced, renamed into place and the
 * directory fsynced, so an object is either absent or complete, and a crash leaves at
 * most a partial file the purge of that key removes.
 */
export class LocalDriver extends StorageDriver {
  readonly name = 'local';
  private readonly objects: string;
  private readonly partial: string;

  constructor(root: string) {
    super();
    const dir = path.resolve(root);
    this.objects = path.join(dir, 'objects');
    this.partial = path.join(dir, 'partial');
  }

  async put(key: string, source: Readable): Promise<void> {
    const target = this.pathOf(key);
    const temp = this.partialOf(key);
    await mkdir(this.partial, { recursive: true });
    try {
      await pipeline(source, createWriteStream(temp, { flags: 'wx' }));
      await syncFile(temp);
      await mkdir(path.dirname(target), { recursive: true });
      await rename(temp, target);
      await syncDirectory(path.dirname(target));
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  async get(key: string, span?: ByteSpan): Promise<Readable> {
    const file = this.pathOf(key);
    await access(file);
    return createReadStream(file, span ? { start: span.start, end: span.end } : {});
  }

  async delete(key: string): Promise<void> {
    await rm(this.partialOf(key), { force: true });
    await rm(this.pathOf(key), { force: true });
  }

  async exists(key: string): Promise<boolean> {
    try {
      await stat(this.pathOf(key));
      return true;
    } catch {
      return false;
    }
  }

  async check(): Promise<void> {
    await mkdir(this.objects, { recursive: true });
    await mkdir(this.partial, { recursive: true });
    await access(this.objects);
  }

  private pathOf(key: string): string {
    if (!KEY.test(key)) throw new Error('not a storage key');
    const [workspace, id] = key.split('/') as [string, string];
    return path.join(this.objects, workspace, id.slice(0, 2), id);
  }

  private partialOf(key: string): string {
    if (!KEY.test(key)) throw new Error('not a storage key');
    return path.join(this.partial, createHash('sha256').update(key).digest('hex').slice(0, 40));
  }
}

async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

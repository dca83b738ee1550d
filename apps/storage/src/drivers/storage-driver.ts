import type { Readable } from 'node:stream';

/** Which bytes of an object to read, both ends inclusive. */
export interface ByteSpan {
  readonly start: number;
  readonly end: number;
}

/**
 * Where file bytes live, behind one interface (docs/storage.md, "Drivers"). Keys are
 * the service's own (`<workspace>/<file id>`), never a user's file name.
 */
export abstract class StorageDriver {
  /** The driver's name in configuration (`local`). */
  abstract readonly name: string;

  /**
   * Writes `source` under `key`, atomically: the object exists, complete and durable,
   * once this resolves, and not at all if it rejects (the source failed, or the write
   * did): nothing partial is left under `key` or elsewhere.
   */
  abstract put(key: string, source: Readable): Promise<void>;

  /** The object's bytes (a span of them); rejects when it does not exist. */
  abstract get(key: string, span?: ByteSpan): Promise<Readable>;

  /** Removes the object and anything a write under `key` may have left; no error when there is none. */
  abstract delete(key: string): Promise<void>;

  /** Whether the object exists (for readiness and tests). */
  abstract exists(key: string): Promise<boolean>;

  /** Throws when the store cannot be used (the readiness check). */
  abstract check(): Promise<void>;
}

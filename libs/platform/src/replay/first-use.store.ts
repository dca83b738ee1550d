import { Kvm, type KV } from '@nats-io/kv';
import { NatsConnectionHolder } from '../nats/nats.provider.js';

/**
 * Remembers keys for `ttlMs`, across replicas: `firstUse(key)` is true the
 * first time a key is offered within that time and false for every repeat.
 * The keys live in a JetStream key-value bucket whose entries expire after
 * `ttlMs`; a create that finds the key wins for exactly one caller. For
 * replay checks: size `ttlMs` to cover the whole time a credential is
 * accepted, so a repeat is refused for as long as it would otherwise pass.
 */
export class FirstUseStore {
  private bucket: Promise<KV> | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly bucketName: string,
    private readonly ttlMs: number,
  ) {}

  /** Whether `key` (letters, digits, `-`, `_`, `=`, `.`) is offered for the first time within the bucket's TTL. */
  async firstUse(key: string): Promise<boolean> {
    const kv = await this.open();
    try {
      await kv.create(key, '');
      return true;
    } catch (err) {
      if (isKeyTaken(err)) return false;
      throw err;
    }
  }

  private open(): Promise<KV> {
    this.bucket ??= this.nats
      .get()
      .then((nc) => new Kvm(nc).create(this.bucketName, { history: 1, ttl: this.ttlMs, timeout: 5000 }))
      .catch((err: unknown) => {
        this.bucket = undefined;
        throw err;
      });
    return this.bucket;
  }
}

/** The error of a create whose key exists (JetStream's wrong last sequence). */
function isKeyTaken(err: unknown): boolean {
  const text = String((err as { message?: unknown } | null)?.message ?? err);
  return /wrong last sequence|key exists|10071|10164/i.test(text);
}

import { Injectable } from '@nestjs/common';
import { Kvm, type KV } from '@nats-io/kv';
import { ServiceConfig } from '../config/service-config.js';
import { NatsConnectionHolder } from '../nats/nats.provider.js';

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  readonly count: number;
  /** When the current window ends (epoch milliseconds). */
  readonly resetAt: number;
}

/** A counter shared by every replica. */
export abstract class RateLimitStore {
  abstract hit(key: string, windowMs: number): Promise<WindowCount>;
}

const MAX_CAS_ATTEMPTS = 20;

/**
 * Fixed-window counters in a JetStream key-value bucket, incremented with
 * compare-and-set on the key's revision, so the count holds across replicas.
 * Keys expire with the bucket's TTL (two windows).
 */
@Injectable()
export class NatsKvRateLimitStore extends RateLimitStore {
  private bucket: Promise<KV> | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: ServiceConfig,
  ) {
    super();
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const kv = await this.open(windowMs);
    const now = Date.now();
    const window = Math.floor(now / windowMs);
    const resetAt = (window + 1) * windowMs;
    const k = `${key}.${window}`;
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const entry = await kv.get(k);
      try {
        if (!entry || entry.operation !== 'PUT') {
          await kv.create(k, '1');
          return { count: 1, resetAt };
        }
        const count = Number(entry.string()) + 1;
        await kv.update(k, String(count), entry.revision);
        return { count, resetAt };
      } catch (err) {
        if (!isWrongRevision(err)) throw err;
      }
    }
    throw new Error(`rate-limit counter ${k} is too contended`);
  }

  private open(windowMs: number): Promise<KV> {
    this.bucket ??= this.nats
      .get()
      .then((nc) => new Kvm(nc).create(`${this.config.NATS_PREFIX}_ratelimit`, { history: 1, ttl: windowMs * 2 }))
      .catch((err: unknown) => {
        this.bucket = undefined;
        throw err;
      });
    return this.bucket;
  }
}

function isWrongRevision(err: unknown): boolean {
  const text = String((err as { message?: unknown })?.message ?? err);
  return /wrong last sequence|key exists|10071|10164/i.test(text);
}

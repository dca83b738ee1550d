import { Injectable } from '@nestjs/common';
import { Kvm, type KV } from '@nats-io/kv';
import { publishAll } from '@strata/events';
import { Clock } from '../clock/clock.js';
import { ServiceConfig } from '../config/service-config.js';
import { NatsConnectionHolder } from '../nats/nats.provider.js';

export interface WindowCount {
  /** Requests counted in the current window, this hit's included (all `n` of them). */
  readonly count: number;
  /** When the current window ends (epoch milliseconds). */
  readonly resetAt: number;
}

/** A counter shared by every replica. */
export abstract class RateLimitStore {
  /** Counts `n` (default 1) in the key's current window. */
  abstract hit(key: string, windowMs: number, n?: number): Promise<WindowCount>;
}

const MAX_CAS_ATTEMPTS = 20;

interface PendingHit {
  readonly n: number;
  readonly resolve: (count: number) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Fixed-window counters in a JetStream key-value bucket, incremented with
 * compare-and-set on the key's revision, so the count holds across replicas.
 * Windows are multiples of the window length since the epoch on the service's
 * clock. Keys expire with the bucket's TTL (two windows).
 *
 * Hits on one key inside one replica are coalesced: while a compare-and-set
 * for the key is in flight, new hits queue up and the next round adds them all
 * at once, handing each its own count. A burst of N concurrent requests
 * therefore costs a few round trips instead of N competing CAS loops, and only
 * replicas (not requests) contend for a key.
 */
@Injectable()
export class NatsKvRateLimitStore extends RateLimitStore {
  private bucket: Promise<KV> | undefined;
  private readonly queued = new Map<string, PendingHit[]>();
  private readonly flushing = new Set<string>();
  private readonly lastWritten = new Map<string, { value: number; revision: number }>();

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: ServiceConfig,
    private readonly clock: Clock,
  ) {
    super();
  }

  async hit(key: string, windowMs: number, n = 1): Promise<WindowCount> {
    if (!Number.isInteger(n) || n < 1) throw new Error(`a hit counts a positive whole number, not ${n}`);
    const window = Math.floor(this.clock.now().getTime() / windowMs);
    const resetAt = (window + 1) * windowMs;
    const k = `${key}.${window}`;
    const count = await new Promise<number>((resolve, reject) => {
      const queue = this.queued.get(k) ?? [];
      queue.push({ n, resolve, reject });
      this.queued.set(k, queue);
      if (!this.flushing.has(k)) void this.flush(k, windowMs);
    });
    return { count, resetAt };
  }

  /** Adds every queued hit of `k` in one compare-and-set, then repeats while hits keep arriving. */
  private async flush(k: string, windowMs: number): Promise<void> {
    this.flushing.add(k);
    try {
      for (let batch = this.take(k); batch.length > 0; batch = this.take(k)) {
        try {
          let count = await this.add(
            k,
            batch.reduce((sum, hit) => sum + hit.n, 0),
            windowMs,
          );
          for (const hit of batch) hit.resolve((count += hit.n));
        } catch (err) {
          batch.forEach((hit) => hit.reject(err));
        }
      }
    } finally {
      this.flushing.delete(k);
    }
  }

  private take(k: string): PendingHit[] {
    const batch = this.queued.get(k) ?? [];
    this.queued.delete(k);
    return batch;
  }

  /**
   * Adds `n` to the counter and returns its value before the addition. The
   * revision and value this replica last wrote are tried first (one round trip
   * when no other replica wrote since); a wrong revision falls back to reading.
   */
  private async add(k: string, n: number, windowMs: number): Promise<number> {
    const kv = await this.open(windowMs);
    let known = this.lastWritten.get(k);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      try {
        if (!known) {
          const entry = await kv.get(k);
          known =
            entry && entry.operation === 'PUT'
              ? { value: Number(entry.string()), revision: entry.revision }
              : undefined;
        }
        if (!known) {
          const revision = await kv.create(k, String(n));
          this.remember(k, { value: n, revision });
          return 0;
        }
        const revision = await this.update(k, known.value + n, known.revision);
        this.remember(k, { value: known.value + n, revision });
        return known.value;
      } catch (err) {
        // A timeout leaves us not knowing whether the write applied: read again. At worst a
        // hit is counted twice, which errs on the strict side.
        if (!isWrongRevision(err) && !isTimeout(err)) throw err;
        known = undefined;
        // Another replica won this round; back off a little, with jitter.
        await new Promise((r) => setTimeout(r, Math.random() * 2 * (attempt + 1)));
      }
    }
    throw new Error(`rate-limit counter ${k} is too contended`);
  }

  /**
   * `kv.update`, written as the key-value protocol defines it (a publish to
   * `$KV.<bucket>.<key>` expecting the key's last revision), through `publishAll`:
   * `kv.update` is a full NATS request, whose client builds an Error with a stack
   * trace even when it succeeds. A changed revision is refused with "wrong last
   * sequence", as `kv.update` refuses it.
   */
  private async update(k: string, value: number, revision: number): Promise<number> {
    const [ack] = await publishAll(await this.nats.get(), [
      {
        subject: `$KV.${this.bucketName()}.${k}`,
        payload: String(value),
        headers: { 'Nats-Expected-Last-Subject-Sequence': String(revision) },
      },
    ]);
    return ack!.seq;
  }

  private bucketName(): string {
    return `${this.config.NATS_PREFIX}_ratelimit`;
  }

  /** Keeps the latest write per key; keys of past windows are dropped as new ones arrive. */
  private remember(k: string, state: { value: number; revision: number }): void {
    this.lastWritten.set(k, state);
    if (this.lastWritten.size > 10_000) this.lastWritten.delete(this.lastWritten.keys().next().value!);
  }

  private open(windowMs: number): Promise<KV> {
    this.bucket ??= this.nats
      .get()
      .then((nc) => new Kvm(nc).create(this.bucketName(), { history: 1, ttl: windowMs * 2, timeout: 5000 }))
      .catch((err: unknown) => {
        this.bucket = undefined;
        throw err;
      });
    return this.bucket;
  }
}

function isTimeout(err: unknown): boolean {
  return (err as { name?: unknown } | null)?.name === 'TimeoutError';
}

/** A key-value compare-and-set refused because the key changed since the revision given (or exists, for create). */
export function isWrongRevision(err: unknown): boolean {
  const text = String((err as { message?: unknown })?.message ?? err);
  return /wrong last sequence|key exists|10071|10164/i.test(text);
}

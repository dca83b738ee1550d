import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { KvWatchInclude, Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { Clock, isWrongRevision, NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import {
  afterLoss,
  codeRefusalMessage,
  codeRefusedAt,
  creatorSuspensionMessage,
  parseLostIsolates,
  probationAt,
  suspendedAt,
  suspensionMessage,
  type LostIsolates,
  type SuspensionPolicy,
} from './lost-isolates.js';

/** Why a run is refused before it starts, and until when. */
export interface RunRefusal {
  readonly until: Date;
  readonly message: string;
}

/**
 * The key of a creator's record beside the workspaces' (a workspace slug has no
 * dot): losses count against the principal that created the workspace too.
 */
export function creatorKey(creator: string): string {
  return `creator.${creator}`;
}

const isCreatorKey = (key: string) => key.startsWith('creator.');

/** Records outlive the longest window and suspension the settings allow (a day), whichever process wrote them. */
const RECORD_TTL_MS = 86_400_000;

/** The key-value bucket of lost isolates and suspensions, one key per workspace. */
export function suspensionsBucket(natsPrefix: string): string {
  return `${natsPrefix}_compute_suspensions`;
}

/** Opens (or makes) the bucket: every process and the operator's command open it alike. */
export function openSuspensionsBucket(nc: NatsConnection, natsPrefix: string): Promise<KV> {
  return new Kvm(nc).create(suspensionsBucket(natsPrefix), { history: 1, ttl: RECORD_TTL_MS, timeout: 5000 });
}
/** Compare-and-set rounds before a loss is given up on (two workers of one workspace losing isolates at once). */
const MAX_WRITE_ATTEMPTS = 10;
/** How long a stopping process waits for its losses to be written. */
const SHUTDOWN_WRITE_MS = 5000;
const RETRY_FOLLOW_MS = 2000;

interface Known {
  readonly revision: number;
  readonly record: LostIsolates | undefined;
}

/**
 * Workspaces whose runs made the sandbox lose isolates, and the ones suspended
 * for it (docs/compute.md, "Suspended workspaces"), shared by every compute
 * process through a JetStream key-value bucket (`<prefix>_compute_suspensions`,
 * one record per workspace). Each process follows the bucket, so asking whether
 * a workspace is suspended is a lookup in memory, not a round trip per run.
 */
@Injectable()
export class WorkspaceSuspensions implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('WorkspaceSuspensions');
  readonly policy: SuspensionPolicy;
  private readonly natsPrefix: string;
  private readonly known = new Map<string, Known>();
  private readonly writes = new Set<Promise<void>>();
  private bucket: Promise<KV> | undefined;
  private watcher: { stop(): void } | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly nats: NatsConnectionHolder,
    config: ComputeConfig,
    private readonly clock: Clock,
  ) {
    this.policy = {
      after: config.COMPUTE_SUSPEND_AFTER_LOST_ISOLATES,
      windowMs: config.COMPUTE_LOST_ISOLATE_WINDOW_MS,
      suspendMs: config.COMPUTE_SUSPEND_MS,
    };
    this.natsPrefix = config.NATS_PREFIX;
  }

  /** Starts following the bucket; the records there now are known before the process serves. */
  async onModuleInit(): Promise<void> {
    try {
      await this.follow();
    } catch (err) {
      this.logger.warn({ msg: 'suspensions not read yet; tried again', err: String(err) });
      this.followLater();
    }
  }

  /** Until when the workspace's runs are refused, if it is suspended now. */
  suspendedUntil(workspace: string): Date | undefined {
    return suspendedAt(this.known.get(workspace)?.record, this.clock.now());
  }

  /** How many workspaces are suspended now (a gauge for operators: docs/runbooks.md, "Metrics"). */
  suspendedCount(): number {
    const now = this.clock.now();
    let count = 0;
    for (const [key, { record }] of this.known) if (!isCreatorKey(key) && suspendedAt(record, now)) count++;
    return count;
  }

  /**
   * Whether the workspace lost an isolate within the window: its runs then
   * take one isolate of an engine at a time (the first step of the back-off;
   * the second is the suspension).
   */
  onProbation(workspace: string, creator?: string): boolean {
    const now = this.clock.now();
    const on = (key: string) => probationAt(this.known.get(key)?.record, now, this.policy) !== undefined;
    return on(workspace) || (creator !== undefined && on(creatorKey(creator)));
  }

  /** Whether every run of the workspace is refused now (it is suspended), and why. */
  workspaceRefusal(workspace: string): RunRefusal | undefined {
    const until = this.suspendedUntil(workspace);
    return until ? { until, message: suspensionMessage(until, this.policy) } : undefined;
  }

  /**
   * Whether a run of this code in this workspace is refused now: the workspace
   * suspended, its creator's workspaces suspended (`creator`, when the caller
   * knows it), or the code.
   */
  refusal(workspace: string, codeHash: string, creator?: string): RunRefusal | undefined {
    const suspended = this.workspaceRefusal(workspace);
    if (suspended) return suspended;
    const byCreator =
      creator === undefined ? undefined : suspendedAt(this.known.get(creatorKey(creator))?.record, this.clock.now());
    if (byCreator) return { until: byCreator, message: creatorSuspensionMessage(byCreator, this.policy) };
    const refused = codeRefusedAt(this.known.get(workspace)?.record, codeHash, this.clock.now());
    return refused ? { until: refused, message: codeRefusalMessage(refused, codeHash) } : undefined;
  }

  /**
   * Counts one isolate lost by a run of `workspace` whose code has hash
   * `codeHash`: that code is refused for a while, and the workspace is
   * suspended when its losses reach the policy's threshold; until then it is
   * on probation (one isolate at a time). Known to this process at once, and
   * written to the shared bucket in the background (a stopping worker waits
   * for these writes before it ends).
   */
  recordLoss(workspace: string, codeHash: string, creator?: string): void {
    for (const key of creator === undefined ? [workspace] : [workspace, creatorKey(creator)]) {
      // Known here at once (the store's answer replaces it): the run that waited behind the lost one
      // on this worker is held back or refused as soon as it gets its isolate, not after the write.
      const known = this.known.get(key);
      this.known.set(key, {
        revision: known?.revision ?? 0,
        record: afterLoss(known?.record, this.clock.now(), this.policy, codeHash),
      });
      const write = this.writeLoss(key, codeHash)
        .catch((err: unknown) => this.logger.error({ msg: 'lost isolate not recorded', key, err: String(err) }))
        .finally(() => this.writes.delete(write));
      this.writes.add(write);
    }
  }

  /**
   * Resolves once every loss recorded so far is written (or given up on), at
   * most SHUTDOWN_WRITE_MS from now. A stopping worker's engines wait for it
   * after their last runs ended, before the NATS connection is drained.
   */
  async settled(): Promise<void> {
    const deadline = Date.now() + SHUTDOWN_WRITE_MS;
    while (this.writes.size > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.writes]),
        new Promise((resolve) => (timer = setTimeout(resolve, deadline - Date.now()))),
      ]);
      clearTimeout(timer);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.settled();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.watcher?.stop();
  }

  /** One more loss on the record of `key` (a workspace, or a creator's `creatorKey`). */
  private async writeLoss(key: string, codeHash: string): Promise<void> {
    const kv = await this.open();
    for (let attempt = 1; ; attempt++) {
      const entry = await kv.get(key);
      const current = entry?.operation === 'PUT' ? entry : undefined;
      const previous = current ? parseLostIsolates(current.string()) : undefined;
      const next = afterLoss(previous, this.clock.now(), this.policy, codeHash);
      try {
        const revision = current
          ? await kv.update(key, JSON.stringify(next), current.revision)
          : await kv.create(key, JSON.stringify(next));
        this.apply(key, revision, next);
        const whose = isCreatorKey(key) ? 'the workspaces of a creator' : 'workspace';
        this.logger.warn({
          msg: next.suspendedUntil ? `${whose} suspended: their runs lost isolates` : 'a run lost its isolate',
          key,
          losses: next.losses.length,
          ...(next.suspendedUntil ? { suspendedUntil: next.suspendedUntil } : {}),
        });
        return;
      } catch (err) {
        // Another process wrote the record meanwhile: read it again. Anything else (a timeout
        // after which the write may have landed) is not tried again: a loss is never counted twice.
        if (!isWrongRevision(err) || attempt >= MAX_WRITE_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * Watches the bucket's changes, then reads what it holds now (a change seen
   * twice is applied once). What was known before is dropped first: a key
   * deleted while no watch ran (a suspension lifted by hand) is not listed.
   */
  private async follow(): Promise<void> {
    const kv = await this.open();
    this.watcher?.stop();
    const changes = await kv.watch({ include: KvWatchInclude.UpdatesOnly });
    this.watcher = changes;
    this.known.clear();
    void this.applyChanges(changes);
    try {
      for await (const key of await kv.keys()) {
        const entry = await kv.get(key);
        if (entry) this.applyEntry(entry);
      }
    } catch (err) {
      changes.stop();
      throw err;
    }
  }

  private async applyChanges(changes: AsyncIterable<KvWatchEntry> & { stop(): void }): Promise<void> {
    try {
      for await (const entry of changes) this.applyEntry(entry);
    } catch (err) {
      if (!this.stopped) this.logger.warn({ msg: 'suspensions watch ended; followed again', err: String(err) });
    }
    // A watch replaced by a newer one ends quietly; the current one ending is followed again.
    if (!this.stopped && this.watcher === changes) this.followLater();
  }

  private followLater(): void {
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      if (this.stopped) return;
      this.follow().catch((err: unknown) => {
        this.logger.warn({ msg: 'suspensions not read; tried again', err: String(err) });
        this.followLater();
      });
    }, RETRY_FOLLOW_MS);
    this.retry.unref();
  }

  private applyEntry(entry: { key: string; revision: number; operation: string; string(): string }): void {
    this.apply(entry.key, entry.revision, entry.operation === 'PUT' ? parseLostIsolates(entry.string()) : undefined);
  }

  private apply(workspace: string, revision: number, record: LostIsolates | undefined): void {
    const known = this.known.get(workspace);
    if (known && known.revision >= revision) return;
    this.known.set(workspace, { revision, record });
  }

  private open(): Promise<KV> {
    this.bucket ??= this.nats
      .get()
      .then((nc) => openSuspensionsBucket(nc, this.natsPrefix))
      .catch((err: unknown) => {
        this.bucket = undefined;
        throw err;
      });
    return this.bucket;
  }
}

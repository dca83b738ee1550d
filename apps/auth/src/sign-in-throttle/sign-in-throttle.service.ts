import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { hashToken } from '@strata/crypto';
import { Transactions } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import { AuthConfig } from '../auth.config.js';
import { SignInFailuresRepository } from './sign-in-failures.repository.js';
import { SignInMetrics, type SignInEndpoint, type SignInLimit } from './sign-in-metrics.js';
import {
  retryAfterSeconds,
  standing,
  waitUntil,
  withFailure,
  withoutFailure,
  type FailureRecord,
  type ThrottlePolicy,
} from './throttle-policy.js';

/** A sign-in refused before any credential was checked. */
export interface SignInRefusal {
  readonly endpoint: SignInEndpoint;
  readonly limit: SignInLimit;
  readonly retryAfterSeconds: number;
}

interface Subject {
  readonly key: string;
  readonly limit: SignInLimit;
  readonly policy: ThrottlePolicy;
}

interface Charge {
  readonly subject: Subject;
  readonly before: FailureRecord | undefined;
  readonly chargedAt: number;
}

/** A password login let through, its failure already counted: `settle` says how it ended. */
export interface LoginAttempt {
  readonly charges: readonly Charge[];
}

/** How often each replica deletes forgotten failures, and how many per statement. */
const PRUNE_INTERVAL_MS = 10 * 60_000;
const PRUNE_BATCH = 500;

/**
 * Failed sign-ins per account and per client address, with waits that double
 * after the free failures (docs/identity.md, "Guessing"). The counts live in
 * PostgreSQL rows every replica shares; a refusal is decided before any
 * password hash or client secret is checked.
 *
 * A password login counts its failure before scrypt runs (inside the same
 * locked transaction that decided it may go ahead), so a burst of parallel
 * guesses is refused past the free failures instead of all running scrypt; a
 * login that succeeds then clears its account's failures and takes its own
 * charge back from its address.
 *
 * The token endpoint checks a client secret with one SHA-256, so it counts
 * failures once they happen, and a client's own limit refuses only wrong
 * secrets: a 256-bit secret is not guessed, and client ids are not secret (a
 * function principal's is `ci_functions_<workspace>`), so a limit that refused
 * the right secret too would let anyone stop a workspace's functions. An
 * address that must wait is refused before any secret is checked.
 */
@Injectable()
export class SignInThrottle implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SignInThrottle');
  private readonly account: ThrottlePolicy;
  private readonly address: ThrottlePolicy;
  private readonly pruning: PeriodicTask;

  constructor(
    private readonly failures: SignInFailuresRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly metrics: SignInMetrics,
    private readonly config: AuthConfig,
  ) {
    const delays = {
      baseDelayMs: config.LOGIN_DELAY_BASE_MS,
      maxDelayMs: config.LOGIN_DELAY_MAX_MS,
      memoryMs: config.LOGIN_FAILURE_MEMORY_MS,
    };
    this.account = { freeFailures: config.LOGIN_FAILURES_PER_ACCOUNT, ...delays };
    this.address = { freeFailures: config.LOGIN_FAILURES_PER_ADDRESS, ...delays };
    this.pruning = new PeriodicTask('sign-in failures pruning', PRUNE_INTERVAL_MS, () => this.prune(), this.logger);
  }

  onApplicationBootstrap(): void {
    this.pruning.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pruning.stop();
  }

  /**
   * A password login for `email` from `address`: refused while either must wait,
   * else let through with its failure counted in advance.
   */
  async beginLogin(email: string, address: string | undefined): Promise<SignInRefusal | LoginAttempt> {
    const subjects = this.subjects('login', hashToken(email.trim().toLowerCase()), address);
    const now = this.clock.now().getTime();
    const outcome = await this.transactions.run(async (tx) => {
      const records = await this.failures.lock(
        tx,
        subjects.map((s) => s.key),
        new Date(now),
      );
      const refusal = this.refusal('login', subjects, records, now);
      if (refusal) return refusal;
      const charges: Charge[] = [];
      for (const subject of subjects) {
        const before = standing(records.get(subject.key), now, subject.policy);
        await this.failures.write(tx, subject.key, withFailure(before, now, subject.policy));
        charges.push({ subject, before, chargedAt: now });
      }
      return { charges };
    });
    if ('limit' in outcome) this.metrics.refused('login', outcome.limit);
    return outcome;
  }

  /** A login that succeeded: its account starts afresh, its address gets its charge back. */
  async loginSucceeded(attempt: LoginAttempt): Promise<void> {
    await this.transactions.run(async (tx) => {
      const records = await this.failures.lock(
        tx,
        attempt.charges.map((c) => c.subject.key),
        this.clock.now(),
      );
      for (const charge of attempt.charges) {
        const kept =
          charge.subject.limit === 'account' ? undefined : withoutFailure(records.get(charge.subject.key), charge);
        await this.failures.write(tx, charge.subject.key, kept);
      }
    });
  }

  /** A client-credentials request from `address`: refused while the address must wait. */
  tokenAddressRefusal(address: string | undefined): Promise<SignInRefusal | undefined> {
    return this.check('token', this.subjects('token', undefined, address));
  }

  /** A wrong secret for `clientId`: refused (rather than counted) while the client must wait. */
  tokenClientRefusal(clientId: string | undefined): Promise<SignInRefusal | undefined> {
    return this.check(
      'token',
      this.subjects('token', clientId === undefined ? undefined : hashToken(clientId), undefined),
    );
  }

  /** A client secret that did not match (or a client that does not exist). */
  async tokenFailed(clientId: string | undefined, address: string | undefined): Promise<void> {
    const subjects = this.subjects('token', clientId === undefined ? undefined : hashToken(clientId), address);
    if (subjects.length === 0) return;
    const now = this.clock.now().getTime();
    await this.transactions.run(async (tx) => {
      const records = await this.failures.lock(
        tx,
        subjects.map((s) => s.key),
        new Date(now),
      );
      for (const subject of subjects) {
        await this.failures.write(tx, subject.key, withFailure(records.get(subject.key), now, subject.policy));
      }
    });
  }

  /** A client that authenticated: its failures are forgotten. */
  async tokenSucceeded(clientId: string): Promise<void> {
    await this.failures.forget(`token:client:${hashToken(clientId)}`);
  }

  /** Deletes the records whose failures are forgotten by now, in small batches. */
  async prune(): Promise<number> {
    const horizon = this.config.LOGIN_DELAY_MAX_MS + this.config.LOGIN_FAILURE_MEMORY_MS;
    const before = new Date(this.clock.now().getTime() - horizon);
    let total = 0;
    for (;;) {
      const deleted = await this.failures.prune(before, PRUNE_BATCH);
      total += deleted;
      if (deleted < PRUNE_BATCH) return total;
    }
  }

  private async check(endpoint: SignInEndpoint, subjects: readonly Subject[]): Promise<SignInRefusal | undefined> {
    if (subjects.length === 0) return undefined;
    const now = this.clock.now().getTime();
    const refusal = this.refusal(endpoint, subjects, await this.failures.read(subjects.map((s) => s.key)), now);
    if (refusal) this.metrics.refused(endpoint, refusal.limit);
    return refusal;
  }

  private subjects(endpoint: SignInEndpoint, account: string | undefined, address: string | undefined): Subject[] {
    const out: Subject[] = [];
    if (account !== undefined) {
      const kind = endpoint === 'login' ? 'account' : 'client';
      out.push({ key: `${endpoint}:${kind}:${account}`, limit: 'account', policy: this.account });
    }
    if (address !== undefined)
      out.push({ key: `${endpoint}:address:${address}`, limit: 'address', policy: this.address });
    return out;
  }

  /** The longest wait among the subjects, if any must wait. */
  private refusal(
    endpoint: SignInEndpoint,
    subjects: readonly Subject[],
    records: ReadonlyMap<string, FailureRecord>,
    now: number,
  ): SignInRefusal | undefined {
    let longest: { until: number; limit: SignInLimit } | undefined;
    for (const subject of subjects) {
      const until = waitUntil(records.get(subject.key), now, subject.policy);
      if (until !== undefined && (!longest || until > longest.until)) longest = { until, limit: subject.limit };
    }
    return longest && { endpoint, limit: longest.limit, retryAfterSeconds: retryAfterSeconds(longest.until, now) };
  }
}

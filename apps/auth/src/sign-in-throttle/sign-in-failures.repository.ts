import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { managerOf, rowsOf, type Tx } from '@strata/db';
import type { FailureRecord } from './throttle-policy.js';

interface FailureRow {
  subject: string;
  failures: number;
  last_failure_at: Date;
}

/**
 * iam.sign_in_failures: failed sign-ins counted per subject (`login:account:<sha-256 of the
 * email>`, `login:address:<ip>`, `token:client:<client id>`, `token:address:<ip>`), shared
 * by every replica. Subjects are not workspace data: an account or an address is named
 * before anyone is known to belong anywhere.
 */
@Injectable()
export class SignInFailuresRepository {
  constructor(private readonly db: DataSource) {}

  /** The records of `subjects` (those with one), read without locking. */
  async read(subjects: readonly string[]): Promise<Map<string, FailureRecord>> {
    const rows = await this.db.query<FailureRow[]>(
      'SELECT subject, failures, last_failure_at FROM iam.sign_in_failures WHERE subject = ANY($1::text[])',
      [subjects],
    );
    return toRecords(rows);
  }

  /**
   * The records of `subjects`, locked until `tx` ends: every replica counting a
   * failure of one of them waits for this transaction. Rows are made first (none
   * failed yet) so there is a row to lock, in subject order, as are the locks, so
   * two attempts naming the same subjects never wait on each other in a circle.
   */
  async lock(tx: Tx, subjects: readonly string[], now: Date): Promise<Map<string, FailureRecord>> {
    const db = managerOf(this.db, tx);
    const sorted = [...new Set(subjects)].sort();
    await db.query(
      `INSERT INTO iam.sign_in_failures (subject, failures, last_failure_at)
       SELECT s, 0, $2 FROM unnest($1::text[]) AS s ORDER BY s
       ON CONFLICT (subject) DO NOTHING`,
      [sorted, now],
    );
    const rows = await db.query<FailureRow[]>(
      `SELECT subject, failures, last_failure_at FROM iam.sign_in_failures
        WHERE subject = ANY($1::text[]) ORDER BY subject FOR UPDATE`,
      [sorted],
    );
    return toRecords(rows);
  }

  /** Writes a locked subject's record; none deletes it. */
  async write(tx: Tx, subject: string, record: FailureRecord | undefined): Promise<void> {
    const db = managerOf(this.db, tx);
    if (!record) {
      await db.query('DELETE FROM iam.sign_in_failures WHERE subject = $1', [subject]);
      return;
    }
    await db.query('UPDATE iam.sign_in_failures SET failures = $2, last_failure_at = $3 WHERE subject = $1', [
      subject,
      record.failures,
      new Date(record.lastFailureAt),
    ]);
  }

  /** Forgets a subject's failures (a successful sign-in of that account). */
  async forget(subject: string): Promise<void> {
    await this.db.query('DELETE FROM iam.sign_in_failures WHERE subject = $1', [subject]);
  }

  /**
   * Deletes up to `limit` records whose last failure is older than `before` (their
   * failures are forgotten by then), skipping rows a sign-in holds. Answers how many.
   */
  async prune(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ subject: string }>(
      await this.db.query(
        `DELETE FROM iam.sign_in_failures WHERE subject IN (
         SELECT subject FROM iam.sign_in_failures WHERE last_failure_at < $1
          ORDER BY last_failure_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING subject`,
        [before, limit],
      ),
    );
    return rows.length;
  }
}

function toRecords(rows: FailureRow[]): Map<string, FailureRecord> {
  return new Map(
    rows.map((r) => [r.subject, { failures: r.failures, lastFailureAt: new Date(r.last_failure_at).getTime() }]),
  );
}

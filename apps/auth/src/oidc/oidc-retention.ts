import { Injectable } from '@nestjs/common';
import { Clock, RetentionSweep, type RetentionRule } from '@strata/platform';
import { AuthConfig } from '../auth.config.js';
import { OidcRetentionRepository } from './oidc-retention.repository.js';

const HOUR_MS = 3_600_000;

/**
 * The auth service's retention (docs/identity.md, "Retention"), every
 * AUTH_RETENTION_SWEEP_INTERVAL_MS on each replica with AUTH_RETENTION_SWEEP_ENABLED:
 * - OIDC payloads (sessions, interactions, grants, authorization codes) expired more
 *   than AUTH_OIDC_RETENTION_HOURS ago: the provider no longer finds them anyway;
 * - workspaces chosen at login whose grant is no longer stored, once that old too
 *   (after the payloads: a grant deleted in this pass frees its workspace in this pass).
 */
@Injectable()
export class OidcRetention extends RetentionSweep {
  constructor(
    private readonly retention: OidcRetentionRepository,
    private readonly config: AuthConfig,
    clock: Clock,
  ) {
    super('auth retention', clock, {
      enabled: config.AUTH_RETENTION_SWEEP_ENABLED,
      intervalMs: config.AUTH_RETENTION_SWEEP_INTERVAL_MS,
    });
  }

  protected rules(now: Date): readonly RetentionRule[] {
    const before = new Date(now.getTime() - this.config.AUTH_OIDC_RETENTION_HOURS * HOUR_MS);
    return [
      { table: 'iam.oidc_payloads', deleteBatch: (limit) => this.retention.deleteExpiredPayloads(before, limit) },
      {
        table: 'iam.login_workspaces',
        deleteBatch: (limit) => this.retention.deleteOrphanLoginWorkspaces(before, limit),
      },
    ];
  }
}

import { Injectable, Logger } from '@nestjs/common';
import { plansChangedSubject, type PlansChanged } from '@strata/contracts';
import { AuthConfig } from '../auth.config.js';
import { NatsConnectionHolder } from '@strata/platform';

/**
 * Announces that a plan or a workspace's plan changed (core NATS publish):
 * every service drops the plan it keeps (docs/plans.md). A lost notice is made
 * up by PLAN_CACHE_TTL_MS.
 */
@Injectable()
export class PlanNotices {
  private readonly logger = new Logger('PlanNotices');

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: AuthConfig,
  ) {}

  async changed(notice: PlansChanged): Promise<void> {
    try {
      const nc = await this.nats.get();
      nc.publish(plansChangedSubject(this.config.NATS_PREFIX), JSON.stringify(notice));
      await nc.flush();
    } catch (err) {
      this.logger.warn({ msg: 'plan change not announced; services keep the old plan a while', err: String(err) });
    }
  }
}

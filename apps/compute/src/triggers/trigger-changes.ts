import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { computeTriggersChangedSubject, type TriggersChanged } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { subscribeTriggersChanged } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';

type Listener = (workspace: string) => void;

/**
 * Says that a workspace's triggers or functions changed, to this replica's
 * listeners at once and to every other replica, and to inbound, over NATS, so
 * what they keep of them (TriggerLookups, inbound's trigger lookups) is
 * dropped. Called after the change committed, before the change is answered.
 */
@Injectable()
export class TriggerChanges implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('TriggerChanges');
  private readonly listeners: Listener[] = [];
  private subscription: Subscription | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: ComputeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    this.subscription = subscribeTriggersChanged(nc, this.config.NATS_PREFIX, (workspace) => this.tell(workspace));
    await nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }

  /** Calls `listener` with the workspace of every change, this replica's and the others'. */
  listen(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * The workspace's triggers or functions changed (committed). Resolves once
   * the NATS server has the notice (it is then on its way to every listener),
   * so a caller answered after it finds the change everywhere; never rejects.
   */
  async changed(scope: WorkspaceScope): Promise<void> {
    this.tell(scope.workspace);
    const notice: TriggersChanged = { workspaceSlug: scope.workspace };
    try {
      const nc = await this.nats.get();
      nc.publish(computeTriggersChangedSubject(this.config.NATS_PREFIX), JSON.stringify(notice));
      await nc.flush();
    } catch (err) {
      this.logger.warn({
        msg: 'trigger change not announced; other replicas and inbound catch up within their cache time',
        err: String(err),
      });
    }
  }

  private tell(workspace: string): void {
    for (const listener of this.listeners) listener(workspace);
  }
}

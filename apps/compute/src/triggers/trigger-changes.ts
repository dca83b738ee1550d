import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { computeTriggersChangedSubject, type TriggersChanged } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';

type Listener = (workspace: string) => void;

/**
 * Says that a workspace's triggers or functions changed, to this replica's
 * listeners at once and to every other replica over NATS, so what they keep of
 * them (TriggerLookups) is dropped. Called after the change committed.
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
    this.subscription = nc.subscribe(computeTriggersChangedSubject(this.config.NATS_PREFIX), {
      callback: (err, msg) => {
        if (err) return;
        let notice: Partial<TriggersChanged> | undefined;
        try {
          notice = msg.json<Partial<TriggersChanged>>();
        } catch {
          return;
        }
        if (typeof notice?.workspaceSlug === 'string') this.tell(notice.workspaceSlug);
      },
    });
    await nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }

  /** Calls `listener` with the workspace of every change, this replica's and the others'. */
  listen(listener: Listener): void {
    this.listeners.push(listener);
  }

  /** The workspace's triggers or functions changed (committed). */
  changed(scope: WorkspaceScope): void {
    this.tell(scope.workspace);
    const notice: TriggersChanged = { workspaceSlug: scope.workspace };
    this.nats
      .get()
      .then((nc) => nc.publish(computeTriggersChangedSubject(this.config.NATS_PREFIX), JSON.stringify(notice)))
      .catch((err: unknown) =>
        this.logger.warn({
          msg: 'trigger change not announced; other replicas catch up within COMPUTE_TRIGGER_CACHE_MS',
          err: String(err),
        }),
      );
  }

  private tell(workspace: string): void {
    for (const listener of this.listeners) listener(workspace);
  }
}

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { computeTriggersChangedSubject, type TriggersChanged } from '@strata/contracts';
import { jsonOf } from './request-reply.js';

/**
 * Calls `listener` with the workspace of every notice that a workspace's
 * triggers or functions changed (compute announces them; compute's replicas
 * and inbound drop what they keep of that workspace). Malformed notices are
 * ignored.
 */
export function subscribeTriggersChanged(
  nc: NatsConnection,
  prefix: string,
  listener: (workspace: string) => void,
): Subscription {
  return nc.subscribe(computeTriggersChangedSubject(prefix), {
    callback: (err, msg) => {
      if (err) return;
      const notice = jsonOf(msg) as Partial<TriggersChanged> | null | undefined;
      if (typeof notice?.workspaceSlug === 'string') listener(notice.workspaceSlug);
    },
  });
}

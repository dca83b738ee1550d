import type { Subscription } from '@nats-io/transport-node';
import { isWorkspaceSlug, usageSubject, type UsageReply, type UsageService } from '@strata/contracts';
import { issueWorkspaceScope, type WorkspaceScope } from '@strata/db';
import { serveRequests } from '@strata/events';
import type { NatsConnectionHolder } from '../nats/nats.provider.js';

/** What a service counts of one workspace for the usage page (docs/plans.md). */
export type UsageCounter = (scope: WorkspaceScope) => Promise<UsageReply['usage']>;

/**
 * Answers the auth service's usage question for `service` (core NATS
 * request/reply, a queue group of the service's replicas) with `count` of the
 * workspace named; a question without a valid workspace slug is answered as
 * unanswerable. Drain the subscription on shutdown.
 */
export async function answerUsageQuestions(
  nats: NatsConnectionHolder,
  prefix: string,
  service: Exclude<UsageService, 'auth'>,
  count: UsageCounter,
  onError: (err: unknown) => void,
): Promise<Subscription> {
  const nc = await nats.get();
  const subscription = serveRequests(
    nc,
    usageSubject(prefix, service),
    `${prefix}_${service}_usage`,
    async (payload): Promise<UsageReply> => {
      const workspace = (payload as { workspaceSlug?: unknown } | null)?.workspaceSlug;
      if (typeof workspace !== 'string' || !isWorkspaceSlug(workspace)) throw new Error('no workspace');
      // The workspace our own auth service names; only its counts are read.
      return { usage: await count(issueWorkspaceScope(workspace)) };
    },
    onError,
  );
  await nc.flush();
  return subscription;
}

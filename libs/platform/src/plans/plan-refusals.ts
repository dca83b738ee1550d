import {
  ErrorCode,
  type PlanFeature,
  type PlanLimit,
  type PlanRestrictedDetails,
  type QuotaExceededDetails,
  type WorkspacePlan,
} from '@strata/contracts';
import { StrataException } from '../errors/strata.exception.js';

/** Words for a resource in messages. */
const RESOURCE_WORDS: Readonly<Record<PlanLimit, string>> = {
  records: 'records',
  storageBytes: 'bytes of record data',
  functionExecutionsPerMonth: 'function executions this month',
  functions: 'functions',
  triggers: 'triggers',
  orchestrations: 'orchestrations',
  webhookSubscriptions: 'webhook subscriptions',
  serviceAccounts: 'service accounts',
};

const FEATURE_WORDS: Readonly<Record<PlanFeature, string>> = {
  endpoints: 'Endpoints are',
  inboundCapture: 'Inbound capture is',
  temporal: 'The Temporal engine is',
};

/**
 * The refusal of `adding` more of `resource` to a workspace that holds `usage`
 * of it, or undefined when the plan leaves room (a null limit is unlimited).
 * Pure: the caller counts, this decides.
 */
export function quotaRefusal(
  plan: WorkspacePlan,
  resource: PlanLimit,
  usage: number,
  adding = 1,
): StrataException | undefined {
  const limit = plan.limits[resource];
  if (limit === null || usage + adding <= limit) return undefined;
  const details: QuotaExceededDetails = { plan: plan.plan, resource, limit, usage };
  const asked = adding === 1 ? '' : ` (this request adds ${adding})`;
  return new StrataException(
    ErrorCode.QUOTA_EXCEEDED,
    `Quota exceeded: the workspace's plan '${plan.plan}' allows ${limit} ${RESOURCE_WORDS[resource]} ` +
      `and the workspace has ${usage}${asked}. Delete some, or ask a platform administrator for a larger plan.`,
    { ...details },
  );
}

/** The refusal of a feature the workspace's plan turns off, or undefined when it is on. */
export function featureRefusal(plan: WorkspacePlan, feature: PlanFeature): StrataException | undefined {
  if (plan.features[feature]) return undefined;
  const details: PlanRestrictedDetails = { plan: plan.plan, feature, enabled: false };
  return new StrataException(
    ErrorCode.PLAN_RESTRICTED,
    `${FEATURE_WORDS[feature]} not part of the workspace's plan '${plan.plan}'. ` +
      'Ask a platform administrator for a plan that includes it.',
    { ...details },
  );
}

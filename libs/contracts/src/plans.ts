/**
 * Workspace plans (docs/plans.md): a named set of limits and features that the
 * platform administrator edits; every workspace has one. The auth service owns
 * plans and which plan each workspace has; each service counts its own
 * resources and refuses a create past the limit.
 */

/** The resources a plan limits, and which service counts each. */
export const PLAN_LIMITS = [
  'records',
  'storageBytes',
  'functionExecutionsPerMonth',
  'functions',
  'triggers',
  'orchestrations',
  'webhookSubscriptions',
  'serviceAccounts',
] as const;
export type PlanLimit = (typeof PLAN_LIMITS)[number];

/** Features a plan turns on or off. */
export const PLAN_FEATURES = ['endpoints', 'inboundCapture', 'temporal'] as const;
export type PlanFeature = (typeof PLAN_FEATURES)[number];

/** A limit: at most this many; null is unlimited. */
export type PlanLimits = Readonly<Record<PlanLimit, number | null>>;
export type PlanFeatures = Readonly<Record<PlanFeature, boolean>>;

/** The plan every workspace gets unless an administrator assigns another; it cannot be deleted. */
export const DEFAULT_PLAN = 'default';

export interface Plan {
  readonly name: string;
  readonly description: string;
  readonly limits: PlanLimits;
  readonly features: PlanFeatures;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What a service needs of a workspace's plan. */
export interface WorkspacePlan {
  readonly workspaceSlug: string;
  readonly plan: string;
  readonly limits: PlanLimits;
  readonly features: PlanFeatures;
}

/** Which service counts which resources (the auth service asks each for its own). */
export const USAGE_SERVICES = {
  auth: ['serviceAccounts'],
  data: ['records', 'storageBytes'],
  compute: ['functions', 'triggers', 'functionExecutionsPerMonth'],
  orchestration: ['orchestrations'],
  webhooks: ['webhookSubscriptions'],
} as const satisfies Record<string, readonly PlanLimit[]>;
export type UsageService = keyof typeof USAGE_SERVICES;

/**
 * A workspace's plan, asked of the auth service (core NATS request/reply, a
 * queue group of the auth replicas) with {@link WorkspacePlanRequest}; the
 * answer is {@link WorkspacePlanReply}.
 */
export function workspacePlanSubject(prefix: string): string {
  return `${prefix}.auth.plans.get`;
}

export interface WorkspacePlanRequest {
  readonly workspaceSlug: string;
}

/** `found: false`: no such workspace (deleted); the asker refuses nothing on its account. */
export type WorkspacePlanReply = { readonly found: true; readonly plan: WorkspacePlan } | { readonly found: false };

/**
 * The auth service's notice (core NATS publish, every replica of every service
 * hears it) that a plan or a workspace's plan changed: what a service keeps of
 * it goes at once. `workspaceSlug` absent: a plan's definition changed, every
 * workspace's kept plan goes.
 */
export function plansChangedSubject(prefix: string): string {
  return `${prefix}.auth.plans.changed`;
}

export interface PlansChanged {
  readonly workspaceSlug?: string;
}

/**
 * A service's usage counts of one workspace (core NATS request/reply to that
 * service's API replicas), asked by the auth service for
 * `GET /workspace/api/v1/workspaces/{slug}/usage`.
 */
export function usageSubject(prefix: string, service: Exclude<UsageService, 'auth'>): string {
  return `${prefix}.${service}.usage`;
}

export interface UsageRequest {
  readonly workspaceSlug: string;
}

export interface UsageReply {
  readonly usage: Readonly<Partial<Record<PlanLimit, number>>>;
}

/**
 * `details` of a `QUOTA_EXCEEDED` error: the resource, the plan's limit and
 * the workspace's usage when the create was refused. The records API answers
 * it as its `details` object; the other APIs as the one entry of their
 * `details` list (with `field` and `message` besides).
 */
export interface QuotaExceededDetails {
  readonly plan: string;
  readonly resource: PlanLimit;
  readonly limit: number;
  readonly usage: number;
}

/** `details` of a `PLAN_RESTRICTED` error: the feature the workspace's plan turns off. */
export interface PlanRestrictedDetails {
  readonly plan: string;
  readonly feature: PlanFeature;
  readonly enabled: false;
}

import {
  PLAN_FEATURES,
  PLAN_LIMITS,
  type Plan,
  type PlanFeature,
  type PlanFeatures,
  type PlanLimit,
  type PlanLimits,
  type WorkspacePlan,
} from '@strata/contracts';
import type { PlanRow } from './plans.repository.js';

/** Every limit, from what is stored (a limit a newer release added and the row lacks is unlimited). */
export function limitsOf(stored: Partial<Record<string, unknown>>): PlanLimits {
  const limits = {} as Record<(typeof PLAN_LIMITS)[number], number | null>;
  for (const key of PLAN_LIMITS) {
    const value = stored[key];
    limits[key] = typeof value === 'number' ? value : null;
  }
  return limits;
}

/** Every feature, from what is stored (a feature the row lacks is on). */
export function featuresOf(stored: Partial<Record<string, unknown>>): PlanFeatures {
  const features = {} as Record<(typeof PLAN_FEATURES)[number], boolean>;
  for (const key of PLAN_FEATURES) features[key] = stored[key] !== false;
  return features;
}

/**
 * `base` with the limits given laid over it (null stays null: unlimited).
 * Pure.
 */
export function mergeLimits(
  base: PlanLimits,
  given: Partial<Record<PlanLimit, number | null | undefined>> = {},
): PlanLimits {
  const merged = { ...base } as Record<(typeof PLAN_LIMITS)[number], number | null>;
  for (const key of PLAN_LIMITS) if (given[key] !== undefined) merged[key] = given[key];
  return merged;
}

export function mergeFeatures(
  base: PlanFeatures,
  given: Partial<Record<PlanFeature, boolean | undefined>> = {},
): PlanFeatures {
  const merged = { ...base } as Record<(typeof PLAN_FEATURES)[number], boolean>;
  for (const key of PLAN_FEATURES) if (given[key] !== undefined) merged[key] = given[key];
  return merged;
}

/** A new plan's starting point: every limit unlimited, every feature on. */
export const OPEN_LIMITS: PlanLimits = limitsOf({});
export const ALL_FEATURES: PlanFeatures = featuresOf({});

export function toPlan(row: PlanRow): Plan {
  return {
    name: row.name,
    description: row.description,
    limits: limitsOf(row.limits),
    features: featuresOf(row.features),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toWorkspacePlan(workspaceSlug: string, row: PlanRow): WorkspacePlan {
  return { workspaceSlug, plan: row.name, limits: limitsOf(row.limits), features: featuresOf(row.features) };
}

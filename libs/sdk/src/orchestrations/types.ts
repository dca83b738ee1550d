import type { JsonObject, JsonValue } from '../http/resource.js';

export type OrchestrationStatus = 'draft' | 'active' | 'paused';

export interface OrchestrationTrigger {
  readonly type: 'event-driven' | 'scheduled' | 'on-demand' | 'http-trigger';
  readonly eventType?: string;
  readonly structureSlug?: string;
  readonly scheduleType?: 'interval' | 'cron' | 'once';
  readonly interval?: number;
  readonly cronExpression?: string;
  readonly scheduledAt?: string;
  readonly timezone?: string;
  readonly path?: string;
  readonly validateSignature?: boolean;
  readonly signingSecret?: string;
  readonly signatureHeaderName?: string;
}

export type ConditionOperator = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'notIn' | 'exists' | 'notExists';

export interface DecisionCondition {
  /** `input.*`, `context.*` or `steps.<stepId>.output.*`. */
  readonly path: string;
  readonly op: ConditionOperator;
  readonly value?: JsonValue;
  readonly valuePath?: string;
}

export interface Step {
  readonly id: string;
  readonly name?: string;
  readonly type: 'compute' | 'decision' | 'delay';
  readonly functionId?: string;
  readonly timeoutMs?: number;
  readonly retry?: { maxAttempts: number; backoffMs: number };
  readonly onSuccess?: { nextStepId: string };
  readonly onFailure?: { action: 'fail' | 'end' };
  readonly cases?: readonly { conditions: readonly DecisionCondition[]; nextStepId: string }[];
  readonly defaultNextStepId?: string;
  readonly delayMs?: number;
  readonly nextStepId?: string | null;
}

export interface Orchestration {
  readonly id: string;
  readonly workspaceSlug: string;
  readonly slug: string;
  readonly name: string;
  readonly description: string | null;
  readonly version: number;
  readonly status: OrchestrationStatus;
  readonly isActive?: boolean;
  readonly trigger: OrchestrationTrigger;
  readonly steps: Step[];
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly createdBy?: string;
  readonly updatedBy?: string;
}

export interface OrchestrationInput {
  readonly slug: string;
  readonly name: string;
  readonly description?: string;
  readonly status?: OrchestrationStatus;
  readonly trigger: OrchestrationTrigger;
  readonly steps: readonly Step[];
}

export type RunState = 'pending' | 'running' | 'waiting' | 'completed' | 'failed';

export interface RunStep {
  readonly id: string;
  readonly orchestrationRunId: string;
  readonly stepId: string;
  readonly stepType: Step['type'];
  readonly attempt: number;
  readonly status: 'pending' | 'running' | 'waiting' | 'succeeded' | 'failed';
  readonly input?: JsonValue;
  readonly output?: JsonValue;
  readonly decisionResult?: DecisionResult | null;
  readonly delayConfig?: { delayMs: number; resumeAt: string; resumedAt: string | null } | null;
  readonly error?: { message: string; code?: string; stack?: string } | null;
  readonly startedAt: string | null;
  readonly completedAt: string | null;
  readonly functionRunId?: string | null;
  readonly functionId?: string | null;
}

export interface OrchestrationRun {
  readonly id: string;
  readonly orchestrationId: string;
  readonly orchestrationVersion: number;
  readonly workspaceSlug: string;
  readonly status: RunState;
  readonly currentStepId: string | null;
  readonly input: JsonObject;
  readonly context: JsonObject;
  readonly stepOutputs: JsonObject;
  readonly correlationId: string | null;
  readonly triggerType: string;
  readonly triggerMetadata: JsonObject;
  readonly hasErrors: boolean;
  readonly delayStepCount: number;
  readonly failureReason: string | null;
  readonly startedAt: string | null;
  readonly completedAt: string | null;
  /** With `include: 'steps'`. */
  readonly steps?: RunStep[];
}

export interface DecisionResult {
  readonly evaluatedCases: number;
  readonly matchedCaseIndex: number | null;
  readonly selectedNextStepId: string | null;
  readonly evaluations: JsonObject[];
}

export interface PageMeta {
  readonly total: number;
  readonly page: number;
  readonly pageSize: number;
}

export interface OrchestrationListQuery {
  readonly page?: number;
  readonly pageSize?: number;
  readonly sort?: 'createdAt' | 'updatedAt' | 'name' | 'slug';
  readonly order?: 'asc' | 'desc';
}

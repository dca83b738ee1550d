import { Injectable } from '@nestjs/common';
import type { FieldError } from '@strata/contracts';
import { KeyRing, newOrchestrationId } from '@strata/crypto';
import { isUniqueViolation, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { bodyField, checkBody, Clock, keyRingOf, StrataException } from '@strata/platform';
import { sameSchedule } from '@strata/schedule';
import { computeStepFunctionIds, evaluateDecision, validateSteps, type Step } from '@strata/workflow';
import { scopeOfTestData } from './test-decision.js';
import { ComputeFunctions } from '../functions/compute-functions.js';
import { OrchestrationConfig } from '../orchestration.config.js';
import {
  CreateOrchestrationRequest,
  UpdateOrchestrationRequest,
  type OrchestrationListQueryRequest,
} from './dto/orchestration.requests.js';
import { checkOrchestrationTrigger, type OrchestrationTrigger } from './orchestration-trigger.js';
import { orchestrationView } from './orchestration-view.js';
import { ORCHESTRATION_STATUSES, type OrchestrationEntity, type OrchestrationStatus } from './orchestration.entity.js';
import { ORCHESTRATION_NOT_FOUND, secretBinding } from './orchestration-names.js';
import { OrchestrationsRepository } from './orchestrations.repository.js';
import { OrchestrationScheduler, scheduleOf } from '../schedules/orchestration-scheduler.js';
import { OrchestrationUsage } from '../usage/orchestration-usage.js';
import { OrchestrationInterests } from './orchestration-interests.js';

/**
 * Orchestrations of a workspace: create, read, list, update (a new version each
 * time, kept), delete. Steps and trigger are checked together and every problem
 * is one `details` entry; compute confirms the steps' functions exist.
 */
interface CheckedParts {
  readonly trigger?: OrchestrationTrigger;
  readonly steps?: Step[];
  readonly errors: FieldError[];
}

/**
 * The checked trigger and steps, or every problem of the body, the trigger and
 * the steps together in one 400 (a field named by both the body's check and the
 * parts' once).
 */
function refuseAll(
  bodyErrors: readonly FieldError[],
  parts: CheckedParts,
): { trigger?: OrchestrationTrigger; steps?: Step[] } {
  const named = new Set(bodyErrors.map((e) => e.field));
  const errors = [...bodyErrors, ...parts.errors.filter((e) => !named.has(e.field))];
  if (errors.length > 0) {
    throw StrataException.validation(
      errors,
      `Invalid orchestration: ${errors.length} problem${errors.length === 1 ? '' : 's'}`,
    );
  }
  return { ...(parts.trigger ? { trigger: parts.trigger } : {}), ...(parts.steps ? { steps: parts.steps } : {}) };
}

/** The collection an orchestration in this state has its record events routed for, if any. */
function watchedCollection(status: string, trigger: OrchestrationTrigger): string | undefined {
  return status === 'active' && trigger.type === 'event-driven' ? trigger.structureSlug : undefined;
}

@Injectable()
export class OrchestrationsService {
  private readonly ring: KeyRing;

  constructor(
    private readonly orchestrations: OrchestrationsRepository,
    private readonly functions: ComputeFunctions,
    private readonly transactions: Transactions,
    private readonly scheduler: OrchestrationScheduler,
    private readonly clock: Clock,
    private readonly usage: OrchestrationUsage,
    private readonly interests: OrchestrationInterests,
    config: OrchestrationConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  async create(scope: WorkspaceScope, by: string, raw: unknown) {
    const id = newOrchestrationId();
    const dto = await checkBody(CreateOrchestrationRequest, raw);
    const parts = await this.checkedParts(scope, id, bodyField(raw, 'trigger'), bodyField(raw, 'steps'));
    const { trigger, steps } = refuseAll([...dto.errors, ...statusConflict(raw)], parts);
    const body = dto.value!;
    const status = body.status ?? (body.isActive === true ? 'active' : 'draft');
    try {
      const created = await this.transactions.run(async (tx) => {
        // Within the workspace's plan (docs/plans.md), counted under a lock until `tx` ends.
        await this.usage.ensureRoom(scope, tx);
        // Its events are routed to us before the row exists, and before its createdAt (docs/events.md, "Routed events").
        const watched = watchedCollection(status, trigger!);
        if (watched !== undefined) await this.interests.widen(scope, tx, watched);
        const now = this.clock.now();
        const made = await this.orchestrations.insert(scope, tx, {
          id,
          slug: body.slug,
          name: body.name,
          description: body.description ?? null,
          status,
          version: 1,
          trigger: trigger!,
          steps: steps!,
          createdBy: by,
          updatedBy: by,
          createdAt: now,
          updatedAt: now,
        });
        await this.scheduler.reschedule(scope, tx, made);
        return made;
      });
      return orchestrationView(created);
    } catch (err) {
      throw conflictOf(err, body.slug);
    }
  }

  async get(scope: WorkspaceScope, id: string) {
    return orchestrationView(await this.found(scope, id));
  }

  async list(scope: WorkspaceScope, q: OrchestrationListQueryRequest) {
    const query = {
      page: q.page ?? 1,
      pageSize: q.pageSize ?? 20,
      sort: q.sort ?? 'createdAt',
      order: q.order ?? 'desc',
    };
    const { rows, total } = await this.orchestrations.list(scope, query);
    return { data: rows.map(orchestrationView), meta: { total, page: query.page, pageSize: query.pageSize } };
  }

  async update(scope: WorkspaceScope, by: string, id: string, raw: unknown) {
    const given = ['name', 'description', 'status', 'isActive', 'trigger', 'steps'].filter(
      (k) => bodyField(raw, k) !== undefined,
    );
    const dto = await checkBody(UpdateOrchestrationRequest, raw);
    if (given.length === 0) {
      // The fields it has instead (`nme`, say) are named too.
      throw StrataException.validation([
        ...dto.errors,
        { field: 'body', message: 'give at least one of name, description, status, trigger, steps' },
      ]);
    }
    await this.found(scope, id);
    const parts = await this.checkedParts(scope, id, bodyField(raw, 'trigger'), bodyField(raw, 'steps'), true);
    const { trigger, steps } = refuseAll([...dto.errors, ...statusConflict(raw)], parts);
    const body = dto.value!;
    const saved = await this.transactions
      .run(async (tx: Tx) => {
        const current = await this.orchestrations.find(scope, id, tx);
        if (!current) throw StrataException.notFound(ORCHESTRATION_NOT_FOUND);
        const next: OrchestrationEntity = {
          ...current,
          name: body.name ?? current.name,
          description: body.description === undefined ? current.description : body.description,
          status: body.status ?? statusOfIsActive(body.isActive, current.status),
          trigger: trigger ?? current.trigger,
          steps: steps ?? current.steps,
          version: current.version + 1,
          updatedBy: by,
          updatedAt: this.clock.now(),
        };
        const watched = watchedCollection(next.status, next.trigger);
        if (watched !== undefined) await this.interests.widen(scope, tx, watched);
        await this.orchestrations.save(scope, tx, next);
        // Only a change of when it fires (or of whether it is active) moves the next due time.
        if (!sameSchedule(scheduleOf(current), scheduleOf(next))) await this.scheduler.reschedule(scope, tx, next);
        return next;
      })
      .catch((err: unknown) => {
        throw conflictOf(err, '');
      });
    await this.interests.narrow(scope);
    return orchestrationView(saved);
  }

  /** A decision step evaluated against `testData`: the spec's decision result; no run is created. */
  async testDecision(scope: WorkspaceScope, id: string, stepId: string, testData: Record<string, unknown>) {
    const orchestration = await this.found(scope, id);
    const step = orchestration.steps.find((s) => s.id === stepId);
    if (!step) throw StrataException.notFound(`Step '${stepId}' not found`);
    if (step.type !== 'decision') {
      throw StrataException.validation([
        { field: 'stepId', message: `step '${stepId}' is a ${step.type} step, not a decision step` },
      ]);
    }
    return evaluateDecision(step, scopeOfTestData(testData));
  }

  async delete(scope: WorkspaceScope, id: string): Promise<void> {
    if (!(await this.orchestrations.delete(scope, id))) throw StrataException.notFound(ORCHESTRATION_NOT_FOUND);
    await this.interests.narrow(scope);
  }

  private async found(scope: WorkspaceScope, id: string): Promise<OrchestrationEntity> {
    const found = await this.orchestrations.find(scope, id);
    if (!found) throw StrataException.notFound(ORCHESTRATION_NOT_FOUND);
    return found;
  }

  /**
   * The trigger and steps checked together (those given, on update): every problem
   * one details entry; then whether compute knows every step's function. The
   * trigger's signing secret is sealed (bound to the orchestration). Nothing thrown.
   */
  private async checkedParts(
    scope: WorkspaceScope,
    id: string,
    rawTrigger: unknown,
    rawSteps: unknown,
    optional = false,
  ): Promise<CheckedParts> {
    const errors: FieldError[] = [];
    let trigger: OrchestrationTrigger | undefined;
    let steps: Step[] | undefined;
    if (!(optional && rawTrigger === undefined)) {
      const t = checkOrchestrationTrigger(rawTrigger, this.clock.now());
      if ('errors' in t) errors.push(...t.errors);
      else trigger = this.sealSecret(id, t.trigger, errors);
    }
    if (!(optional && rawSteps === undefined)) {
      const s = validateSteps(rawSteps);
      if ('errors' in s) errors.push(...s.errors);
      else steps = s.steps;
    }
    // Looked up also when the steps have other problems: an unknown function is one of them.
    const wanted = rawSteps === undefined ? [] : computeStepFunctionIds(rawSteps);
    if (wanted.length > 0) {
      const { existing, endpoints } = await this.functions.existing(
        scope,
        wanted.map((w) => w.functionId),
      );
      const named = new Set(errors.map((e) => e.field));
      for (const w of wanted) {
        const field = `steps[${w.index}].functionId`;
        if (named.has(field)) continue;
        if (!existing.has(w.functionId)) errors.push({ field, message: 'names no function of this workspace' });
        else if (endpoints.has(w.functionId))
          errors.push({
            field,
            message:
              'names a function of endpoint code (export default async (context)); a compute step runs code defining async function run()',
          });
      }
    }
    return { ...(trigger ? { trigger } : {}), ...(steps ? { steps } : {}), errors };
  }

  private sealSecret(id: string, trigger: OrchestrationTrigger, errors: FieldError[]): OrchestrationTrigger {
    const secret = trigger.signingSecret;
    if (secret === undefined) return trigger;
    if (typeof secret === 'string') {
      const value = this.ring.seal(secret, secretBinding(id));
      return { ...trigger, signingSecret: { value, encrypted: true, keyVersion: KeyRing.versionOf(value) } };
    }
    try {
      this.ring.unseal(secret.value, secretBinding(id));
      return trigger;
    } catch {
      errors.push({
        field: 'trigger.signingSecret',
        message: 'is an encrypted value of another orchestration: send the secret itself',
      });
      return trigger;
    }
  }
}

/**
 * `status` with the older `isActive` that says otherwise (`status: draft` with
 * `isActive: true`): refused rather than one of them silently winning.
 */
function statusConflict(raw: unknown): FieldError[] {
  const status = bodyField(raw, 'status');
  const isActive = bodyField(raw, 'isActive');
  if (!(ORCHESTRATION_STATUSES as readonly unknown[]).includes(status) || typeof isActive !== 'boolean') return [];
  if (isActive === (status === 'active')) return [];
  return [
    {
      field: 'isActive',
      message: `contradicts status '${String(status)}': give status alone (isActive is its older form)`,
    },
  ];
}

/** The older boolean: true is active; false pauses an active orchestration and leaves a draft a draft. */
function statusOfIsActive(isActive: boolean | undefined, current: OrchestrationStatus): OrchestrationStatus {
  if (isActive === undefined) return current;
  if (isActive) return 'active';
  return current === 'draft' ? 'draft' : 'paused';
}

/** The 409s of the unique slug and webhook path. */
function conflictOf(err: unknown, slug: string): unknown {
  if (isUniqueViolation(err, 'orchestrations_slug_key')) {
    return StrataException.conflict(`Orchestration with slug '${slug}' already exists`);
  }
  if (isUniqueViolation(err, 'orchestrations_webhook_path_key')) {
    return StrataException.conflict('Another orchestration already has that webhook path');
  }
  return err;
}

import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { FieldError } from '@strata/contracts';
import type { KeyRing } from '@strata/crypto';
import { isUniqueViolation, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { isUUID } from 'class-validator';
import { bodyField, checkBody, Clock, keyRingOf, StrataException } from '@strata/platform';
import { sameSchedule } from '@strata/schedule';
import { ComputeConfig } from '../compute.config.js';
import { parseSortParam } from '../functions/function-list.js';
import type { JsonObject } from '../json.js';
import {
  CreateTriggerRequest,
  type TriggerListQueryRequest,
  type UpdateTriggerRequest,
} from './dto/trigger.requests.js';
import { SchedulesRepository } from '../schedules/schedules.repository.js';
import { authModesOf } from '../endpoints/endpoint-auth-modes.js';
import {
  EndpointCredentials,
  type CredentialKind,
  type IssuedCredentials,
} from '../endpoints/endpoint-credentials.service.js';
import { functionKindOf } from '../functions/function-code.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import { FUNCTION_NOT_FOUND } from '../functions/functions.service.js';
import { AutoPersistLinks } from '../http-triggers/auto-persist-links.js';
import {
  checkTriggerMetadata,
  EXECUTION_TYPES,
  nextScheduledTime,
  type ExecutionType,
  type Schedule,
} from './metadata/index.js';
import { isPlainObject } from './metadata/reading.js';
import { sealSigningSecret, sealTriggerParams, triggerBindings } from './trigger-params.js';
import { triggerRow, triggerView } from './trigger-view.js';
import type { TriggerEntity } from './trigger.entity.js';
import {
  DEFAULT_TRIGGER_SORT,
  SYSTEM_TRIGGER_NAME,
  TRIGGER_SORT_FIELDS,
  TriggersRepository,
} from './triggers.repository.js';
import { TriggerChanges } from './trigger-changes.js';
import { ComputeQuota } from '../usage/compute-quota.js';
import { TriggerInterests } from './trigger-interests.js';

export const TRIGGER_NOT_FOUND = 'Trigger not found.';
export const TRIGGER_NAME_TAKEN = 'Trigger with that name already exists.';
export const TRIGGER_PATH_TAKEN = 'Another trigger of this type already has that path.';
export const SYSTEM_TRIGGER_FIXED = 'The system default trigger cannot be updated or deleted.';

/** Triggers of a workspace: create (per-type checks, sealed parameters), read, list, update (versioned), delete, pause. */
/** The fields that decide a scheduled trigger's due times (undefined for the other types). */
function scheduleFieldsOf(trigger: TriggerEntity): Record<string, unknown> | undefined {
  return trigger.executionType === 'scheduled' ? trigger.metadata : undefined;
}

/** The collection an event-driven trigger's metadata watches. */
function watchedCollection(metadata: unknown): string | undefined {
  const slug = (metadata as { recordSlug?: unknown } | null)?.recordSlug;
  return typeof slug === 'string' ? slug : undefined;
}

@Injectable()
export class TriggersService {
  private readonly ring: KeyRing;

  constructor(
    private readonly triggers: TriggersRepository,
    private readonly schedules: SchedulesRepository,
    private readonly transactions: Transactions,
    private readonly credentials: EndpointCredentials,
    private readonly functions: FunctionsRepository,
    private readonly autoPersist: AutoPersistLinks,
    private readonly changes: TriggerChanges,
    private readonly clock: Clock,
    private readonly quota: ComputeQuota,
    private readonly interests: TriggerInterests,
    config: ComputeConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  /** `raw`: the body as it came (`createIn` checks it). */
  async create(scope: WorkspaceScope, by: string, raw: unknown) {
    const created = await this.transactions.run((tx) => this.createIn(scope, tx, by, raw));
    await this.changes.changed(scope);
    return this.view(scope, created);
  }

  /**
   * A trigger as the API answers it; an endpoint trigger with what exists of its
   * credentials, and those issued by this request in the clear (shown only now).
   */
  async view(scope: WorkspaceScope, { trigger, issued }: { trigger: TriggerEntity; issued?: IssuedCredentials }) {
    if (trigger.executionType !== 'endpoint') return triggerView(trigger);
    return {
      ...triggerView(trigger),
      credentials: await this.credentials.summary(scope, trigger.id),
      ...(issued ? { issuedCredentials: issued } : {}),
    };
  }

  /**
   * Creates a trigger in `tx`: the create endpoint and draft publishing. `raw`
   * is the body as it came: its fields, its metadata (for a valid
   * executionType) and its function are checked together, every problem one
   * `details` entry of one 400.
   */
  async createIn(
    scope: WorkspaceScope,
    tx: Tx,
    by: string,
    raw: unknown,
  ): Promise<{ trigger: TriggerEntity; issued?: IssuedCredentials }> {
    const id = randomUUID();
    const dto = await checkBody(CreateTriggerRequest, raw);
    const type = executionTypeOf(raw);
    const errors: FieldError[] = [...dto.errors];
    let checked: JsonObject | undefined;
    const rawMetadata = bodyField(raw, 'triggerMetadata') ?? {};
    if (type !== undefined && isPlainObject(rawMetadata)) {
      const metadata = this.metadataOf(id, type, rawMetadata);
      if ('errors' in metadata) errors.push(...metadata.errors);
      else checked = metadata.metadata;
    }
    const functionId = bodyField(raw, 'functionId');
    if (type !== undefined && typeof functionId === 'string' && isUUID(functionId)) {
      errors.push(...(await this.functionErrors(scope, tx, functionId, type)));
    }
    if (errors.length > 0 || !dto.value || !checked || !type) throw StrataException.validation(errors);
    const body = dto.value;
    assertNameFree(body.name);
    // Within the workspace's plan (docs/plans.md): its features, then its count under a lock until `tx` ends.
    if (type === 'endpoint') await this.quota.ensureFeature(scope, 'endpoints');
    if (type === 'http-trigger') await this.quota.ensureFeature(scope, 'inboundCapture');
    await this.quota.ensureRoom(scope, tx, 'triggers');
    // Its events are routed to us before the row exists (docs/events.md, "Routed events").
    const watched = type === 'event-driven' ? watchedCollection(checked) : undefined;
    if (watched !== undefined) await this.interests.widen(scope, tx, watched);
    const metadata = type === 'http-trigger' ? await this.autoPersist.link(scope, checked, undefined) : checked;
    const functionGone = () => StrataException.validation([{ field: 'functionId', message: FUNCTION_NOT_FOUND }]);
    try {
      const created = await this.transactions.savepoint(tx, () =>
        this.triggers.insert(
          scope,
          tx,
          {
            id,
            name: body.name,
            description: body.description ?? null,
            functionId: body.functionId,
            executionType: type,
            metadata,
            by,
          },
          this.clock.now(),
        ),
      );
      // The insert reads the function in its own statement: a function of another workspace, or one
      // deleted since it was checked, inserts nothing.
      if (!created) throw functionGone();
      await this.reschedule(scope, tx, created);
      const issued = await this.credentials.align(scope, tx, created);
      return issued ? { trigger: created, issued } : { trigger: created };
    } catch (err) {
      throw conflictOf(err);
    }
  }

  /**
   * The problems of a trigger's function: missing (or another workspace's), or
   * of the other shape: endpoint triggers run endpoint code (`export default
   * async (context)`), every other type a script defining `async function run()`.
   */
  private async functionErrors(
    scope: WorkspaceScope,
    tx: Tx,
    functionId: string,
    type: ExecutionType,
  ): Promise<FieldError[]> {
    const fn = await this.functions.find(scope, functionId, tx);
    if (!fn) return [{ field: 'functionId', message: FUNCTION_NOT_FOUND }];
    const kind = functionKindOf(fn.code);
    if (type === 'endpoint' && kind !== 'endpoint') {
      return [
        {
          field: 'functionId',
          message:
            'names a function defining async function run(); endpoint triggers run endpoint code: export default async (context) => { ... }',
        },
      ];
    }
    if (type !== 'endpoint' && kind === 'endpoint') {
      return [
        {
          field: 'functionId',
          message: `names endpoint code (export default); ${type} triggers run code that defines async function run()`,
        },
      ];
    }
    return [];
  }

  /** `POST /function-triggers/{id}/rotate-credentials`: new values now, the old ones refused from now on. */
  async rotateCredentials(scope: WorkspaceScope, id: string, kinds: CredentialKind[] | undefined) {
    const rotated = await this.transactions.run(async (tx) => {
      const trigger = await this.triggers.find(scope, id, tx);
      if (!trigger) throw StrataException.notFound(TRIGGER_NOT_FOUND);
      if (trigger.executionType !== 'endpoint') {
        throw StrataException.validation([
          {
            field: 'id',
            message: `Only endpoint triggers have credentials; this trigger is ${trigger.executionType}.`,
          },
        ]);
      }
      const modes = authModesOf(trigger.metadata);
      const used: CredentialKind[] = [
        ...(modes.includes('apiKey') ? (['apiKey'] as const) : []),
        ...(modes.includes('hmac') ? (['signingSecret'] as const) : []),
      ];
      const wanted = kinds ?? used;
      const unused = wanted.filter((k) => !used.includes(k));
      if (wanted.length === 0 || unused.length > 0) {
        throw StrataException.validation([
          {
            field: 'credentials',
            message:
              used.length === 0
                ? 'This endpoint uses no key or signing secret (its auth modes are bearer or public).'
                : `This endpoint's auth modes use ${used.join(' and ')} only.`,
          },
        ]);
      }
      const issued = await this.credentials.rotate(scope, tx, trigger, wanted);
      return { trigger, issued };
    });
    // Replicas drop the credentials they kept: the old ones are refused from the next call.
    await this.changes.changed(scope);
    return this.view(scope, rotated);
  }

  async get(scope: WorkspaceScope, id: string) {
    return this.view(scope, { trigger: await this.live(scope, id) });
  }

  async list(scope: WorkspaceScope, q: TriggerListQueryRequest) {
    const sorted = parseSortParam(q.sort, TRIGGER_SORT_FIELDS, DEFAULT_TRIGGER_SORT);
    if ('errors' in sorted) throw StrataException.validation(sorted.errors);
    const query = {
      search: q.search || undefined,
      searchField: q.searchField ?? 'name',
      limit: q.limit ?? 500,
      page: q.page ?? 1,
      sort: sorted.sort,
    };
    const { rows, total } = await this.triggers.list(scope, query);
    return { triggers: rows.map(triggerRow), total, page: query.page, limit: query.limit };
  }

  async update(scope: WorkspaceScope, by: string, id: string, body: UpdateTriggerRequest) {
    const nothing = body.name === undefined && body.description === undefined && body.triggerMetadata === undefined;
    try {
      const updated = await this.transactions.run(async (tx) => {
        const current = await this.triggers.find(scope, id, tx);
        if (!current) throw StrataException.notFound(TRIGGER_NOT_FOUND);
        if (current.isSystem) throw StrataException.validation([{ field: 'id', message: SYSTEM_TRIGGER_FIXED }]);
        if (body.executionType !== undefined && body.executionType !== current.executionType) {
          throw StrataException.validation([
            { field: 'executionType', message: `executionType cannot be changed (it is ${current.executionType}).` },
          ]);
        }
        if (nothing) {
          throw StrataException.validation([
            { field: 'body', message: 'Give at least one of name, description, triggerMetadata.' },
          ]);
        }
        assertNameFree(body.name);
        const checked =
          body.triggerMetadata === undefined
            ? undefined
            : this.checkedMetadata(id, current.executionType as ExecutionType, body.triggerMetadata);
        const metadata =
          checked !== undefined && current.executionType === 'http-trigger'
            ? await this.autoPersist.link(scope, checked, current.metadata)
            : checked;
        const watched =
          current.executionType === 'event-driven' && !current.paused && checked !== undefined
            ? watchedCollection(checked)
            : undefined;
        if (watched !== undefined) await this.interests.widen(scope, tx, watched);
        const updated = await this.triggers.update(
          scope,
          tx,
          id,
          { name: body.name, description: body.description, metadata },
          by,
          this.clock.now(),
        );
        // Only a change of when it fires moves the next due time (an update of its parameters does not).
        if (metadata !== undefined && !sameSchedule(scheduleFieldsOf(current), scheduleFieldsOf(updated))) {
          await this.reschedule(scope, tx, updated);
        }
        const issued = metadata === undefined ? undefined : await this.credentials.align(scope, tx, updated);
        return issued ? { trigger: updated, issued } : { trigger: updated };
      });
      await this.changes.changed(scope);
      if (updated.trigger.executionType === 'event-driven') await this.interests.narrow(scope);
      return await this.view(scope, updated);
    } catch (err) {
      throw conflictOf(err);
    }
  }

  async delete(scope: WorkspaceScope, by: string, id: string): Promise<{ success: true; message: string }> {
    const deleted = await this.transactions.run(async (tx) => {
      const current = await this.live(scope, id, tx);
      if (current.isSystem) throw StrataException.validation([{ field: 'id', message: SYSTEM_TRIGGER_FIXED }]);
      if (!(await this.triggers.softDelete(scope, tx, id, by, this.clock.now()))) {
        throw StrataException.notFound(TRIGGER_NOT_FOUND);
      }
      await this.schedules.set(scope, tx, id, null);
      return current;
    });
    await this.changes.changed(scope);
    if (deleted.executionType === 'event-driven') await this.interests.narrow(scope);
    return { success: true, message: 'Trigger deleted.' };
  }

  async setPaused(scope: WorkspaceScope, by: string, id: string, paused: boolean) {
    const current = await this.live(scope, id);
    if (current.isSystem) throw StrataException.validation([{ field: 'id', message: SYSTEM_TRIGGER_FIXED }]);
    const watched = current.executionType === 'event-driven' ? watchedCollection(current.metadata) : undefined;
    await this.transactions.run(async (tx) => {
      if (!paused && watched !== undefined) await this.interests.widen(scope, tx, watched);
      await this.triggers.setPaused(scope, tx, id, paused, by, this.clock.now());
      // Paused: off the scheduler's list. Resumed: due again from now (missed occurrences are not made up).
      await this.reschedule(scope, tx, { ...current, paused });
    });
    await this.changes.changed(scope);
    if (paused && watched !== undefined) await this.interests.narrow(scope);
    return { success: true, message: paused ? 'Trigger paused.' : 'Trigger resumed.' };
  }

  /** Puts a scheduled trigger's next due time (from now) on the scheduler's list, or takes it off. */
  private async reschedule(scope: WorkspaceScope, tx: Tx, trigger: TriggerEntity): Promise<void> {
    if (trigger.executionType !== 'scheduled') return;
    const due = trigger.paused ? null : nextScheduledTime(trigger.metadata as unknown as Schedule, this.clock.now());
    await this.schedules.set(scope, tx, trigger.id, due);
  }

  /** A live trigger of the workspace, or 404. */
  async live(scope: WorkspaceScope, id: string, tx?: Tx): Promise<TriggerEntity> {
    const found = await this.triggers.find(scope, id, tx);
    if (!found) throw StrataException.notFound(TRIGGER_NOT_FOUND);
    return found;
  }

  /** The metadata checked for its type with parameters sealed; a 400 with one details entry per problem. */
  private checkedMetadata(triggerId: string, type: ExecutionType, raw: unknown): JsonObject {
    const checked = this.metadataOf(triggerId, type, raw);
    if ('errors' in checked) throw StrataException.validation(checked.errors);
    return checked.metadata;
  }

  /** The metadata checked for its type with parameters sealed, or every problem of it. */
  private metadataOf(
    triggerId: string,
    type: ExecutionType,
    raw: unknown,
  ): { metadata: JsonObject } | { errors: FieldError[] } {
    const checked = checkTriggerMetadata(type, raw, this.clock.now());
    if ('errors' in checked) return { errors: checked.errors };
    const metadata = checked.metadata as unknown as JsonObject;
    const params = (metadata['params'] ?? {}) as JsonObject;
    const sealed = sealTriggerParams(this.ring, triggerBindings(triggerId), params);
    const errors: FieldError[] = 'errors' in sealed ? [...sealed.errors] : [];
    let signingSecret: JsonObject | undefined;
    if (metadata['signingSecret'] !== undefined) {
      const secret = sealSigningSecret(this.ring, triggerBindings(triggerId), metadata['signingSecret']);
      if ('errors' in secret) errors.push(...secret.errors);
      else signingSecret = secret.secret;
    }
    if (errors.length || 'errors' in sealed) return { errors };
    return { metadata: { ...metadata, params: sealed.params, ...(signingSecret ? { signingSecret } : {}) } };
  }
}

/** The body's executionType when it is a valid one (`on-demand` when absent); undefined otherwise. */
function executionTypeOf(raw: unknown): ExecutionType | undefined {
  const given = bodyField(raw, 'executionType');
  if (given === undefined) return 'on-demand';
  return (EXECUTION_TYPES as readonly unknown[]).includes(given) ? (given as ExecutionType) : undefined;
}

/** The 409 of a unique violation on a trigger's name or path; any other error as it is. */
function conflictOf(err: unknown): unknown {
  if (isUniqueViolation(err, 'triggers_name_key')) return StrataException.conflict(TRIGGER_NAME_TAKEN);
  if (isUniqueViolation(err, 'triggers_path_key')) return StrataException.conflict(TRIGGER_PATH_TAKEN);
  return err;
}

/**
 * The system default trigger's name is taken in every workspace, whether or
 * not its first test run has made it yet: a trigger of that name would keep the
 * system trigger from being made, and every test run would fail.
 */
function assertNameFree(name: string | undefined): void {
  if (name === SYSTEM_TRIGGER_NAME) throw StrataException.conflict(TRIGGER_NAME_TAKEN);
}

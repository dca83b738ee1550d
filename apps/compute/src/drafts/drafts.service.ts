import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Transactions, type WorkspaceScope } from '@strata/db';
import type { KeyRing } from '@strata/crypto';
import { Clock, createValidationPipe, keyRingOf, StrataException, type Grants } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { CreateFunctionRequest } from '../functions/dto/function.requests.js';
import { functionView, type FunctionView } from '../functions/function-view.js';
import { FunctionsService } from '../functions/functions.service.js';
import { TriggersService } from '../triggers/triggers.service.js';
import { TriggerChanges } from '../triggers/trigger-changes.js';
import type { JsonObject } from '../json.js';
import type { DraftEntity } from './draft.entity.js';
import { openDraftSecrets, sealDraftSecrets } from './draft-secrets.js';
import { DraftsRepository } from './drafts.repository.js';
import type { CreateDraftRequest, DraftResourceType } from './dto/draft.requests.js';

export const DRAFT_NOT_FOUND = 'Draft not found.';

export interface DraftView {
  id: string;
  resourceType: string;
  data: JsonObject;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

const draftView = (d: DraftEntity): DraftView => ({
  id: d.id,
  resourceType: d.resourceType,
  data: d.data,
  createdBy: d.createdBy,
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
});

/**
 * Drafts: a resource body kept unpublished (complete or not). Writing a draft
 * needs create on its resource type; publishing checks the body as the create
 * endpoint would, creates the resource and deletes the draft in one transaction.
 */
@Injectable()
export class DraftsService {
  private readonly validation = createValidationPipe();
  private readonly ring: KeyRing;

  constructor(
    private readonly drafts: DraftsRepository,
    private readonly functions: FunctionsService,
    private readonly triggers: TriggersService,
    private readonly transactions: Transactions,
    private readonly changes: TriggerChanges,
    private readonly clock: Clock,
    config: ComputeConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  async create(scope: WorkspaceScope, by: string, grants: Grants, body: CreateDraftRequest): Promise<DraftView> {
    this.assertMayWrite(grants, body.resourceType);
    const now = this.clock.now();
    const id = randomUUID();
    const draft = await this.drafts.insert(scope, {
      id,
      resourceType: body.resourceType,
      data: this.sealed(body.resourceType, id, body.data),
      createdBy: by,
      createdAt: now,
      updatedAt: now,
    });
    return draftView(draft);
  }

  async get(scope: WorkspaceScope, id: string): Promise<DraftView> {
    const draft = await this.drafts.find(scope, id);
    if (!draft) throw StrataException.notFound(DRAFT_NOT_FOUND);
    return draftView(draft);
  }

  async list(scope: WorkspaceScope, resourceType: DraftResourceType | undefined): Promise<{ drafts: DraftView[] }> {
    return { drafts: (await this.drafts.list(scope, resourceType)).map(draftView) };
  }

  async replace(scope: WorkspaceScope, grants: Grants, id: string, data: JsonObject): Promise<DraftView> {
    const draft = await this.drafts.find(scope, id);
    if (!draft) throw StrataException.notFound(DRAFT_NOT_FOUND);
    this.assertMayWrite(grants, draft.resourceType);
    await this.drafts.replaceData(scope, id, this.sealed(draft.resourceType, id, data), this.clock.now());
    return this.get(scope, id);
  }

  async delete(scope: WorkspaceScope, grants: Grants, id: string): Promise<{ success: true; message: string }> {
    const draft = await this.drafts.find(scope, id);
    if (!draft) throw StrataException.notFound(DRAFT_NOT_FOUND);
    this.assertMayWrite(grants, draft.resourceType);
    await this.drafts.delete(scope, id);
    return { success: true, message: 'Draft deleted.' };
  }

  /** `POST /compute-functions/{draft_id}/publish`: 201 with the function; the draft is gone. */
  async publishFunction(scope: WorkspaceScope, by: string, id: string): Promise<FunctionView> {
    const created = await this.transactions.run(async (tx) => {
      const draft = await this.drafts.find(scope, id, tx);
      if (!draft || draft.resourceType !== 'compute-functions') throw StrataException.notFound(DRAFT_NOT_FOUND);
      const body = (await this.validation.transform(draft.data, {
        type: 'body',
        metatype: CreateFunctionRequest,
      })) as CreateFunctionRequest;
      const fn = await this.functions.createIn(scope, tx, by, body);
      await this.drafts.delete(scope, id, tx);
      return fn;
    });
    return functionView(created);
  }

  /** `POST /function-triggers/{draft_id}/publish`: 201 with the trigger; the draft is gone. */
  async publishTrigger(scope: WorkspaceScope, by: string, id: string) {
    const created = await this.transactions.run(async (tx) => {
      const draft = await this.drafts.find(scope, id, tx);
      if (!draft || draft.resourceType !== 'function-triggers') throw StrataException.notFound(DRAFT_NOT_FOUND);
      const trigger = await this.triggers.createIn(scope, tx, by, openDraftSecrets(this.ring, id, draft.data));
      await this.drafts.delete(scope, id, tx);
      return trigger;
    });
    await this.changes.changed(scope);
    return this.triggers.view(scope, created);
  }

  /** A trigger draft's body with its secrets sealed to the draft (draft-secrets.ts); other drafts as they are. */
  private sealed(resourceType: string, id: string, data: JsonObject): JsonObject {
    if (resourceType !== 'function-triggers') return data;
    const sealed = sealDraftSecrets(this.ring, id, data);
    if ('errors' in sealed) throw StrataException.validation(sealed.errors);
    return sealed.data;
  }

  private assertMayWrite(grants: Grants, resourceType: string): void {
    if (!grants.can(resourceType, 'create')) {
      throw StrataException.forbidden(`Drafts of ${resourceType} need create on ${resourceType}.`);
    }
  }
}

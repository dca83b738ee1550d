import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { TriggersRepository } from '../triggers.repository.js';
import { TRIGGER_NOT_FOUND } from '../triggers.service.js';
import { TriggerVersionsRepository, type TriggerVersionRow } from './trigger-versions.repository.js';

export const TRIGGER_VERSION_NOT_FOUND = 'Trigger version not found.';

/** A saved version as the API answers it: who saved what, and when; parameters in their sealed form. */
export function triggerVersionView(v: TriggerVersionRow) {
  return {
    triggerId: v.trigger_id,
    version: v.version,
    name: v.name,
    description: v.description,
    functionId: v.function_id,
    triggerMetadata: v.metadata,
    createdBy: v.created_by,
    createdAt: v.created_at.toISOString(),
  };
}

/** The versions of a live trigger (a deleted one's are kept for audit, but no longer answered). */
@Injectable()
export class TriggerVersions {
  constructor(
    private readonly triggers: TriggersRepository,
    private readonly versions: TriggerVersionsRepository,
  ) {}

  async list(scope: WorkspaceScope, triggerId: string) {
    await this.assertLive(scope, triggerId);
    return { versions: (await this.versions.list(scope, triggerId)).map(triggerVersionView) };
  }

  async get(scope: WorkspaceScope, triggerId: string, version: number) {
    await this.assertLive(scope, triggerId);
    const found = await this.versions.find(scope, triggerId, version);
    if (!found) throw StrataException.notFound(TRIGGER_VERSION_NOT_FOUND);
    return triggerVersionView(found);
  }

  private async assertLive(scope: WorkspaceScope, triggerId: string): Promise<void> {
    if (!(await this.triggers.find(scope, triggerId))) throw StrataException.notFound(TRIGGER_NOT_FOUND);
  }
}

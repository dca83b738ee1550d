import type { TriggerEntity } from './trigger.entity.js';

/** A trigger as the API answers it: encrypted parameters in their sealed form, never in the clear. */
export function triggerView(t: TriggerEntity) {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    functionId: t.functionId,
    executionType: t.executionType,
    triggerMetadata: t.metadata,
    workspaceSlug: t.workspaceSlug,
    version: t.version,
    paused: t.paused,
    isSystem: t.isSystem,
    createdBy: t.createdBy,
    updatedBy: t.updatedBy,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

/** A list row: the spec's fields, and whether it is paused or the system one. */
export function triggerRow(t: TriggerEntity) {
  return {
    id: t.id,
    name: t.name,
    executionType: t.executionType,
    functionId: t.functionId,
    paused: t.paused,
    isSystem: t.isSystem,
    createdAt: t.createdAt.toISOString(),
  };
}

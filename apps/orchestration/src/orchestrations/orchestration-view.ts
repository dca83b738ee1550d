import type { OrchestrationEntity } from './orchestration.entity.js';

/** An orchestration as the API answers it (a signing secret in its sealed form only). */
export function orchestrationView(o: OrchestrationEntity) {
  return {
    id: o.id,
    workspaceSlug: o.workspaceSlug,
    slug: o.slug,
    name: o.name,
    description: o.description,
    version: o.version,
    status: o.status,
    /** The older description's boolean, derived. */
    isActive: o.status === 'active',
    trigger: o.trigger,
    steps: o.steps,
    createdBy: o.createdBy,
    updatedBy: o.updatedBy,
    createdAt: o.createdAt.toISOString(),
    updatedAt: o.updatedAt.toISOString(),
  };
}

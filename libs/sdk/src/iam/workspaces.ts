import { Resource, segment, type CallOptions } from '../http/resource.js';
import type { Workspace } from './types.js';

/** `/workspace/api/v1/workspaces`: needs a user token (not scoped to a workspace to create one). */
export class Workspaces extends Resource {
  create(input: { slug: string; name: string; description?: string }, options?: CallOptions): Promise<Workspace> {
    return this.call('POST', '/workspaces', { body: input, signal: options?.signal });
  }

  /** The caller's workspaces. */
  list(options?: CallOptions): Promise<{ data: Workspace[] }> {
    return this.read('/workspaces', undefined, options);
  }

  get(slug: string, options?: CallOptions): Promise<Workspace> {
    return this.read(`/workspaces/${segment(slug)}`, undefined, options);
  }
}

import { Resource, segment, type CallOptions, type JsonObject } from '../http/resource.js';
import type { Draft, DraftResourceType } from './types.js';

/**
 * `{data_base}/drafts`: unpublished function and trigger bodies. Publish with
 * `computeFunctions.publish(draftId)` or `functionTriggers.publish(draftId)`.
 */
export class Drafts extends Resource {
  create(input: { resourceType: DraftResourceType; data: JsonObject }, options?: CallOptions): Promise<Draft> {
    return this.call('POST', '/drafts', { body: input, signal: options?.signal });
  }

  get(id: string, options?: CallOptions): Promise<Draft> {
    return this.read(`/drafts/${segment(id)}`, undefined, options);
  }

  list(query: { resourceType?: DraftResourceType } = {}, options?: CallOptions): Promise<{ drafts: Draft[] }> {
    return this.read('/drafts', { ...query }, options);
  }

  /** Replaces the draft's body. */
  update(id: string, data: JsonObject, options?: CallOptions): Promise<Draft> {
    return this.call('PUT', `/drafts/${segment(id)}`, { body: { data }, signal: options?.signal });
  }

  delete(id: string, options?: CallOptions): Promise<unknown> {
    return this.call('DELETE', `/drafts/${segment(id)}`, { signal: options?.signal });
  }
}

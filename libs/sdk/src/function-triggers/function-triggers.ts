import { namedListQuery } from '../compute-functions/compute-functions.js';
import type { NamedListQuery } from '../compute-functions/types.js';
import { ITERATOR_PAGE_SIZE as SIZE, walkPages } from '../http/pages.js';
import { Resource, segment, type CallOptions, type JsonObject, type SuccessMessage } from '../http/resource.js';
import type {
  FunctionTrigger,
  FunctionTriggerInput,
  FunctionTriggerList,
  FunctionTriggerRow,
  FunctionTriggerVersion,
  RotatableCredential,
  TriggerMetadata,
} from './types.js';

/** `{data_base}/function-triggers`: what runs a function, and when. */
export class FunctionTriggers extends Resource {
  create(input: FunctionTriggerInput, options?: CallOptions): Promise<FunctionTrigger> {
    return this.call('POST', '/function-triggers', { body: input, signal: options?.signal });
  }

  get(id: string, options?: CallOptions): Promise<FunctionTrigger> {
    return this.read(`/function-triggers/${segment(id)}`, undefined, options);
  }

  list(query: NamedListQuery = {}, options?: CallOptions): Promise<FunctionTriggerList> {
    return this.read('/function-triggers', namedListQuery(query), options);
  }

  /** Every saved version, newest first. */
  versions(id: string, options?: CallOptions): Promise<{ versions: FunctionTriggerVersion[] }> {
    return this.read(`/function-triggers/${segment(id)}/versions`, undefined, options);
  }

  version(id: string, version: number, options?: CallOptions): Promise<FunctionTriggerVersion> {
    return this.read(`/function-triggers/${segment(id)}/versions/${segment(version)}`, undefined, options);
  }

  /** Every trigger the query matches, page after page (see `walkPages`). */
  iterate(
    query: Omit<NamedListQuery, 'limit' | 'page'> = {},
    options?: CallOptions,
  ): AsyncGenerator<FunctionTriggerRow> {
    return walkPages(SIZE, async (index) => {
      const page = await this.list({ ...query, limit: SIZE, page: index + 1 }, options);
      return { items: page.triggers, total: page.total };
    });
  }

  /** Any of name, description, triggerMetadata (which replaces the stored one); the type cannot change. */
  update(
    id: string,
    input: { name?: string; description?: string; triggerMetadata?: TriggerMetadata },
    options?: CallOptions,
  ): Promise<FunctionTrigger> {
    return this.call('PUT', `/function-triggers/${segment(id)}`, { body: input, signal: options?.signal });
  }

  delete(id: string, options?: CallOptions): Promise<SuccessMessage> {
    return this.call('DELETE', `/function-triggers/${segment(id)}`, { signal: options?.signal });
  }

  /** Runs an on-demand trigger; `executionParams` is the whole body. Answers the job id. */
  async execute(id: string, executionParams: JsonObject = {}, options?: CallOptions): Promise<string> {
    const answer = await this.call<unknown>('POST', `/function-triggers/${segment(id)}/execute`, {
      body: executionParams,
      signal: options?.signal,
    });
    if (typeof answer !== 'string') throw new TypeError('execute: the platform did not answer a job id');
    return answer;
  }

  pause(id: string, options?: CallOptions): Promise<SuccessMessage> {
    return this.call('PATCH', `/function-triggers/${segment(id)}/pause`, { signal: options?.signal });
  }

  resume(id: string, options?: CallOptions): Promise<SuccessMessage> {
    return this.call('PATCH', `/function-triggers/${segment(id)}/resume`, { signal: options?.signal });
  }

  /**
   * Endpoint triggers: new credentials (default every one the trigger uses), in `issuedCredentials`
   * of the answer, once; the old ones stop working.
   */
  rotateCredentials(
    id: string,
    credentials?: readonly RotatableCredential[],
    options?: CallOptions,
  ): Promise<FunctionTrigger> {
    return this.call('POST', `/function-triggers/${segment(id)}/rotate-credentials`, {
      body: credentials ? { credentials } : {},
      signal: options?.signal,
    });
  }

  /** Publishes a trigger draft (201). */
  publish(draftId: string, options?: CallOptions): Promise<FunctionTrigger> {
    return this.call('POST', `/function-triggers/${segment(draftId)}/publish`, { signal: options?.signal });
  }
}

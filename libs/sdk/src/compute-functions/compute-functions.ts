import { ITERATOR_PAGE_SIZE as SIZE, walkPages } from '../http/pages.js';
import { Resource, segment, type CallOptions, type JsonObject, type SuccessMessage } from '../http/resource.js';
import type {
  AllowedDomain,
  ComputeFunction,
  ComputeFunctionInput,
  ComputeFunctionList,
  FunctionVersion,
  NamedListQuery,
  QueuedRun,
} from './types.js';

/** The list query of the functions API: `sort` travels as a JSON array. */
export const namedListQuery = (query: NamedListQuery) => ({
  ...query,
  sort: query.sort ? JSON.stringify(query.sort) : undefined,
});

/** `{data_base}/compute-functions`: functions, their versions, test runs and the allowed domains of `api.fetch`. */
export class ComputeFunctions extends Resource {
  readonly allowedDomains: AllowedDomains;

  constructor(...args: ConstructorParameters<typeof Resource>) {
    super(...args);
    this.allowedDomains = new AllowedDomains(...args);
  }

  create(input: ComputeFunctionInput, options?: CallOptions): Promise<ComputeFunction> {
    return this.call('POST', '/compute-functions', { body: input, signal: options?.signal });
  }

  get(id: string, options?: CallOptions): Promise<ComputeFunction> {
    return this.read(`/compute-functions/${segment(id)}`, undefined, options);
  }

  /** Rows without `code`. */
  list(query: NamedListQuery = {}, options?: CallOptions): Promise<ComputeFunctionList> {
    return this.read('/compute-functions', namedListQuery(query), options);
  }

  /** Every function the query matches (without `code`), page after page (see `walkPages`). */
  iterate(query: Omit<NamedListQuery, 'limit' | 'page'> = {}, options?: CallOptions): AsyncGenerator<ComputeFunction> {
    return walkPages(SIZE, async (index) => {
      const page = await this.list({ ...query, limit: SIZE, page: index + 1 }, options);
      return { items: page.functions, total: page.total };
    });
  }

  /** Any of name, description, code; every update is a new version. */
  update(id: string, input: Partial<ComputeFunctionInput>, options?: CallOptions): Promise<ComputeFunction> {
    return this.call('PUT', `/compute-functions/${segment(id)}`, { body: input, signal: options?.signal });
  }

  /** Deletes the function; its triggers stop. */
  delete(id: string, options?: CallOptions): Promise<SuccessMessage> {
    return this.call('DELETE', `/compute-functions/${segment(id)}`, { signal: options?.signal });
  }

  versions(id: string, options?: CallOptions): Promise<{ versions: FunctionVersion[] }> {
    return this.read(`/compute-functions/${segment(id)}/versions`, undefined, options);
  }

  version(id: string, version: number, options?: CallOptions): Promise<FunctionVersion> {
    return this.read(`/compute-functions/${segment(id)}/versions/${segment(version)}`, undefined, options);
  }

  /** Queues a run of `code` through the system default trigger; `params` become `executionParams`. */
  test(input: { code: string; params: JsonObject }, options?: CallOptions): Promise<QueuedRun> {
    return this.call('POST', '/compute-functions/test', { body: input, signal: options?.signal });
  }

  /** Publishes a function draft: the function is created and the draft deleted (201; 409 on a taken name). */
  publish(draftId: string, options?: CallOptions): Promise<ComputeFunction> {
    return this.call('POST', `/compute-functions/${segment(draftId)}/publish`, { signal: options?.signal });
  }
}

/** `{data_base}/compute-functions/allowed-domains`: where `api.fetch` and `api.httpPost` may go. */
export class AllowedDomains extends Resource {
  list(options?: CallOptions): Promise<{ domains: AllowedDomain[]; limit: number }> {
    return this.read('/compute-functions/allowed-domains', undefined, options);
  }

  add(domain: string, options?: CallOptions): Promise<AllowedDomain> {
    return this.call('POST', '/compute-functions/allowed-domains', { body: { domain }, signal: options?.signal });
  }

  remove(domain: string, options?: CallOptions): Promise<SuccessMessage> {
    return this.call('DELETE', `/compute-functions/allowed-domains/${segment(domain)}`, { signal: options?.signal });
  }
}

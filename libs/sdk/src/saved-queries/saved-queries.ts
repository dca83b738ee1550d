import { Resource, segment, type CallOptions, type JsonObject } from '../http/resource.js';
import type { QueryResult } from '../records/types.js';
import type { SavedQuery, SavedQueryInput, SavedQueryTest } from './types.js';

/** `{data_base}/saved-queries`: named query definitions executed by id (`client.smartQueries` is an alias). */
export class SavedQueries extends Resource {
  create(input: SavedQueryInput, options?: CallOptions): Promise<SavedQuery> {
    return this.call('POST', '/saved-queries', { body: input, signal: options?.signal });
  }

  /** The saved queries of one collection (by its slug). */
  list(resource: string, options?: CallOptions): Promise<{ results: SavedQuery[] }> {
    return this.read(`/saved-queries/${segment(resource)}`, undefined, options);
  }

  /** Executes a saved query; a missing required variable is a 422. */
  execute<Row = JsonObject>(id: string, variables: JsonObject = {}, options?: CallOptions): Promise<QueryResult<Row>> {
    return this.call('POST', `/saved-queries/${segment(id)}/execute`, { body: { variables }, signal: options?.signal });
  }

  /** Checks and runs a definition against a collection without saving it. */
  test<Row = JsonObject>(resource: string, input: SavedQueryTest, options?: CallOptions): Promise<QueryResult<Row>> {
    return this.call('POST', `/saved-queries/${segment(resource)}/test`, { body: input, signal: options?.signal });
  }
}

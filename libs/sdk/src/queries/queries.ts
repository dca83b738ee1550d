import { Resource, type CallOptions, type JsonObject, type JsonValue } from '../http/resource.js';

/** `{data_base}/query`: the string query language (`FROM … WHERE … ORDER BY … LIMIT …`). */
export class Queries extends Resource {
  /** Runs a statement of the query language; `parameters` fill its placeholders. */
  run<Row = JsonObject>(query: string, parameters?: Readonly<Record<string, JsonValue>>, options?: CallOptions) {
    return this.call<Row[] | { data: Row[]; meta?: JsonObject }>('POST', '/query', {
      body: parameters === undefined ? { query } : { query, parameters },
      signal: options?.signal,
    });
  }
}

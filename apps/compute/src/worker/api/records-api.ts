import type { WorkspaceScope } from '@strata/db';
import type { JsonValue } from '@strata/sandbox';
import type { DataApi } from './data-api.js';
import {
  ApiRefusal,
  arrayArg,
  listText,
  objectArg,
  optionalObjectArg,
  scalarText,
  stringArg,
  type ApiHandler,
} from './handler.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Characters of the deprecated form's encoded query string: well inside the 16 KiB of a request line and headers. */
const LEGACY_QUERY_MAX_CHARS = 8 * 1024;
/** The options of the deprecated `queryRecords(collection, options)`. */
const LEGACY_OPTIONS = new Set(['filter', 'sort', 'limit', 'offset']);
/** A field of an equality-map filter: a name, or a dotted path of names. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * The record methods of `api`, each one call (two for a collection named by
 * slug) to the data service's public API as the function principal
 * (docs/compute.md, "api inside a function"):
 *
 *   fetchRecord(recordId, {expand?, version?})           GET   /records/{id}; null when there is none
 *   createRecord(collection, data, metadata?)            POST  /records
 *   updateRecord(recordId, data, options?)               PATCH /records/{id}
 *   queryRecords(definition)                             POST  /records/query; {data, meta}
 *   queryRecords(collection, {filter, sort, limit, offset})  (deprecated) GET /records/slug/{slug}
 *   bulkCreateRecords(collection, records, options?)     POST  /records/bulk (one aggregate event)
 *   batchCreateRecords(collection, records, options?)    POST  /records/batch (one event per record)
 *   executeSavedQuery(id, variables?)                    POST  /saved-queries/{id}/execute; {data, meta}
 *
 * `collection` is a collection id or its record slug.
 */
export function recordHandlers(data: DataApi, scope: WorkspaceScope): Record<string, ApiHandler> {
  /** Collection ids by slug, for this run. */
  const ids = new Map<string, string>();
  const collectionId = async (collection: string, signal: AbortSignal): Promise<string> => {
    if (UUID.test(collection)) return collection;
    const known = ids.get(collection);
    if (known) return known;
    const found = (await data.call(scope, 'GET', ['structures', 'slug', collection], { signal })) as { id?: unknown };
    if (typeof found?.id !== 'string') throw new ApiRefusal(`collection '${collection}' has no id`);
    ids.set(collection, found.id);
    return found.id;
  };
  /**
   * `records` of a bulk or batch call: record data objects, or `{data, metadata?}`
   * wrappers. Only an object with nothing but those keys (and an object `data`)
   * is a wrapper: a record with its own field named `data` beside others is data.
   */
  const recordList = (args: JsonValue[]): JsonValue[] =>
    arrayArg(args, 1, 'records').map((r, i) => {
      if (typeof r !== 'object' || r === null || Array.isArray(r))
        throw new ApiRefusal(`records[${i}] must be an object`);
      const wrapper =
        typeof r['data'] === 'object' &&
        r['data'] !== null &&
        !Array.isArray(r['data']) &&
        Object.keys(r).every((key) => key === 'data' || key === 'metadata');
      return wrapper ? r : { data: r };
    });

  return {
    fetchRecord: async (args, { signal }) => {
      const options = optionalObjectArg(args, 1, 'options');
      const query: Record<string, string> = {};
      // An option given as null is an option not given, as for every other optional argument.
      const { expand, version } = options;
      if (expand !== undefined && expand !== null) query['expand'] = listText(expand, 'options.expand');
      if (version !== undefined && version !== null) query['version'] = scalarText(version, 'options.version');
      const recordId = stringArg(args, 0, 'recordId');
      // No record has an id that is not a UUID.
      if (!UUID.test(recordId)) return null;
      return data.callOrNull(scope, ['records', recordId], { query, signal });
    },

    createRecord: async (args, { signal }) => {
      const structureId = await collectionId(stringArg(args, 0, 'collection'), signal);
      const metadata = args[2] === undefined || args[2] === null ? undefined : objectArg(args, 2, 'metadata');
      return data.call(scope, 'POST', ['records'], {
        body: { structureId, data: objectArg(args, 1, 'data'), ...(metadata ? { metadata } : {}) },
        signal,
      });
    },

    updateRecord: async (args, { signal }) =>
      data.call(scope, 'PATCH', ['records', stringArg(args, 0, 'recordId')], {
        // The data service takes them as the body's `options` ({createVersion, skipValidation}).
        body: {
          data: objectArg(args, 1, 'data'),
          ...(args[2] === undefined || args[2] === null ? {} : { options: objectArg(args, 2, 'options') }),
        },
        signal,
      }),

    queryRecords: async (args, { signal }, notes) => {
      if (typeof args[0] === 'string') {
        notes.deprecated(
          'api.queryRecords(collection, options) is deprecated: pass a canonical query definition ({resource, where, text, sort, page})',
        );
        return legacyQuery(data, scope, args[0], optionalObjectArg(args, 1, 'options'), signal);
      }
      return data.call(scope, 'POST', ['records', 'query'], { body: objectArg(args, 0, 'definition'), signal });
    },

    bulkCreateRecords: async (args, { signal }) =>
      data.call(scope, 'POST', ['records', 'bulk'], {
        body: {
          structureId: await collectionId(stringArg(args, 0, 'collection'), signal),
          records: recordList(args),
          ...(args[2] === undefined || args[2] === null ? {} : { options: objectArg(args, 2, 'options') }),
        },
        signal,
      }),

    batchCreateRecords: async (args, { signal }) =>
      data.call(scope, 'POST', ['records', 'batch'], {
        body: {
          structureId: await collectionId(stringArg(args, 0, 'collection'), signal),
          records: recordList(args),
          ...(args[2] === undefined || args[2] === null ? {} : { options: objectArg(args, 2, 'options') }),
        },
        signal,
      }),

    executeSavedQuery: async (args, { signal }) =>
      data.call(scope, 'POST', ['saved-queries', stringArg(args, 0, 'savedQueryId'), 'execute'], {
        body: { variables: optionalObjectArg(args, 1, 'variables') },
        signal,
      }),
  };
}

/** The older `queryRecords(collection, {filter, sort, limit, offset})`, through the records list; answered as `{data, meta}`. */
async function legacyQuery(
  data: DataApi,
  scope: WorkspaceScope,
  collection: string,
  options: { [key: string]: JsonValue },
  signal: AbortSignal,
): Promise<JsonValue> {
  // An option it does not know would be dropped and the query answer every record: refused instead.
  const unknown = Object.keys(options).filter((key) => !LEGACY_OPTIONS.has(key));
  if (unknown.length > 0) {
    throw new ApiRefusal(
      `queryRecords(collection, options) takes ${[...LEGACY_OPTIONS].join(', ')}; not ${unknown.join(', ')} ` +
        '(pass a canonical definition, {resource, where, text, sort, page}, for more)',
    );
  }
  const query: Record<string, string> = {};
  const filter = options['filter'];
  if (typeof filter === 'string') query['filter'] = filter;
  else if (typeof filter === 'object' && filter !== null && !Array.isArray(filter)) {
    // An equality map: each value quoted, so commas and colons stay values; each key a field name.
    const pairs = Object.entries(filter).map(([k, v]) => {
      if (!FIELD_NAME.test(k)) throw new ApiRefusal(`options.filter: '${k}' is not a field name`);
      return `${k}:"${scalarText(v, `options.filter.${k}`).replace(/["\\]/g, (c) => `\\${c}`)}"`;
    });
    if (pairs.length > 0) query['filter'] = pairs.join(',');
  } else if (filter !== undefined && filter !== null) {
    throw new ApiRefusal('options.filter must be a filter string or an object of field values');
  }
  const sort = options['sort'];
  if (sort !== undefined) query['sort'] = listText(sort, 'options.sort');
  for (const key of ['limit', 'offset'] as const) {
    if (options[key] !== undefined) query[key] = scalarText(options[key], `options.${key}`);
  }
  // The deprecated form travels in the URL, which the services cap with the headers at 16 KiB.
  if (new URLSearchParams(query).toString().length > LEGACY_QUERY_MAX_CHARS) {
    throw new ApiRefusal(
      `options are too long for queryRecords(collection, options), whose filter travels in the URL ` +
        `(at most ${LEGACY_QUERY_MAX_CHARS} characters encoded): pass a canonical definition, ` +
        '{resource, where, text, sort, page}, whose conditions travel in the body',
    );
  }
  // A collection id lists by id; anything else is its record slug.
  const path = UUID.test(collection) ? ['records'] : ['records', 'slug', collection];
  if (UUID.test(collection)) query['structureId'] = collection;
  const listed = (await data.call(scope, 'GET', path, { query, signal })) as {
    results?: JsonValue;
    pagination?: JsonValue;
  };
  return { data: listed.results ?? [], meta: listed.pagination ?? {} };
}

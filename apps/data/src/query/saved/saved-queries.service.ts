import { Injectable } from '@nestjs/common';
import type { FieldError } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { StrataException, type Grants } from '@strata/platform';
import { CollectionsRepository } from '../../collections/collections.repository.js';
import { isPlainObject, show } from '../../schema/issues.js';
import { DataConfig } from '../../data.config.js';
import { QueryService, type QueryResult } from '../query.service.js';
import { checkComplexity } from '../complexity.js';
import { parseCanonical } from '../canonical.js';
import { resolveJoins } from '../joins.js';
import type { CreateSavedQueryRequest, TestSavedQueryRequest } from './dto/saved-query.requests.js';
import { SavedQueriesRepository, type SavedQuery } from './saved-queries.repository.js';
import { deprecatedForms, type DeprecatedForms } from './deprecated-forms.js';
import {
  fitsType,
  SAMPLE_VALUES,
  scanPlaceholders,
  substitute,
  VARIABLE_TYPES,
  type VariableDeclaration,
} from './placeholders.js';
import type { CollectionLookup } from '../../records/collection-access.js';

/**
 * Saved queries: named canonical definitions whose values may be `${var}`
 * placeholders with declared types. A definition is checked against its
 * collection when it is saved (with a sample value of each variable's type), and
 * each execution checks the values given: a missing required variable is a 422,
 * a value of the wrong JavaScript type a 400 (no coercion).
 */
@Injectable()
export class SavedQueriesService {
  constructor(
    private readonly repository: SavedQueriesRepository,
    private readonly collections: CollectionsRepository,
    private readonly queries: QueryService,
    private readonly config: DataConfig,
  ) {}

  /** `earlier`: the body's own problems (checkBody), answered together with those of the definition. */
  async create(
    scope: WorkspaceScope,
    actor: string,
    body: CreateSavedQueryRequest,
    earlier: readonly FieldError[] = [],
  ): Promise<SavedQuery> {
    const { resource, variables, legacy } = await this.check(scope, body.query, body.variables, earlier);
    return this.repository.insert(scope, {
      resource,
      name: body.name,
      description: body.description ?? null,
      definition: body.query,
      variables,
      legacyPlaceholders: legacy,
      actor,
    });
  }

  async list(scope: WorkspaceScope, resource: string): Promise<{ results: SavedQuery[] }> {
    await this.collections.find(scope, { slug: resource });
    return { results: await this.repository.list(scope, resource) };
  }

  get(scope: WorkspaceScope, id: string, resource?: string): Promise<SavedQuery> {
    return this.repository.get(scope, id, resource);
  }

  /** Runs a saved query; `deprecated` names the deprecated forms it holds, for the answer's headers. */
  async execute(
    scope: WorkspaceScope,
    grants: Grants,
    id: string,
    values: Readonly<Record<string, unknown>>,
    resource?: string,
  ): Promise<{ result: QueryResult; deprecated: DeprecatedForms }> {
    const saved = await this.get(scope, id, resource);
    const result = await this.run(scope, grants, saved.query, saved.variables, values);
    return { result, deprecated: deprecatedForms(saved.query, saved.deprecatedPlaceholders) };
  }

  /** Checks and runs a definition without saving it. */
  async test(
    scope: WorkspaceScope,
    grants: Grants,
    resource: string,
    body: TestSavedQueryRequest,
    earlier: readonly FieldError[] = [],
  ): Promise<{ result: QueryResult; deprecated: DeprecatedForms }> {
    if (!isPlainObject(body.query)) throw StrataException.validation([...earlier]);
    const query = { ...body.query, resource: body.query['resource'] ?? resource };
    if (query.resource !== resource) {
      throw StrataException.validation([
        { field: 'query.resource', message: `must be ${resource}, the collection in the path` },
      ]);
    }
    // Checked against the collections the caller may list: another is not found, whatever the body says.
    const readable = this.queries.readable(grants);
    await readable.find(scope, { slug: resource });
    const { variables, legacy } = await this.check(scope, query, body.variables, earlier, readable);
    const result = await this.run(scope, grants, query, variables, body.values ?? {});
    return { result, deprecated: deprecatedForms(query, legacy) };
  }

  private async run(
    scope: WorkspaceScope,
    grants: Grants,
    definition: Record<string, unknown>,
    declared: Readonly<Record<string, VariableDeclaration>>,
    given: Readonly<Record<string, unknown>>,
  ): Promise<QueryResult> {
    const values = new Map<string, unknown>();
    const missing: string[] = [];
    const problems: FieldError[] = [];
    for (const [name, decl] of Object.entries(declared)) {
      const value = Object.hasOwn(given, name) ? given[name] : decl.default;
      if (value === undefined) {
        if (decl.required !== false) missing.push(name);
        continue;
      }
      if (!fitsType(decl.type, value))
        problems.push({ field: `variables.${name}`, message: `must be a ${decl.type}, got ${show(value)}` });
      else values.set(name, value);
    }
    for (const name of Object.keys(given)) {
      if (!Object.hasOwn(declared, name))
        problems.push({ field: `variables.${name}`, message: 'is not a variable of this query' });
    }
    if (missing.length) {
      throw StrataException.unprocessable(
        `Missing required variable${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
        missing.map((name) => ({ field: `variables.${name}`, message: 'is required' })),
      );
    }
    if (problems.length) throw StrataException.validation(problems, 'Variables do not fit their declared types');
    return this.queries.runDefinition(scope, grants, substitute(definition, values));
  }

  /**
   * Validates a definition and its declarations against the collection, with a
   * sample value per variable, and reports every problem at once: the body's own
   * (`earlier`), the declarations, the placeholders, and the definition's fields.
   */
  private async check(
    scope: WorkspaceScope,
    definition: Record<string, unknown> | undefined,
    rawVariables: Record<string, unknown> | undefined,
    earlier: readonly FieldError[] = [],
    collections: CollectionLookup = this.collections,
  ): Promise<{ resource: string; variables: Record<string, VariableDeclaration>; legacy: boolean }> {
    const problems: FieldError[] = [...earlier];
    const variables = declarations(rawVariables, problems);
    const scan = scanPlaceholders(definition);
    problems.push(...scan.problems);
    for (const name of scan.names) {
      if (!Object.hasOwn(variables, name))
        problems.push({ field: `variables.${name}`, message: 'is used in the query but not declared' });
    }
    const resource = definition?.['resource'];
    if (definition === undefined || typeof resource !== 'string') {
      if (definition !== undefined)
        problems.push({ field: 'query.resource', message: 'is required: the collection slug' });
      throw StrataException.validation(problems, 'The saved query is not valid');
    }
    checkComplexity(definition['where'], this.config.DATA_QUERY_MAX_CONDITIONS);
    const c = await collections.find(scope, { slug: resource });
    const sample = substitute(
      definition,
      new Map(Object.entries(variables).map(([n, d]) => [n, SAMPLE_VALUES[d.type]])),
    );
    if (!isPlainObject(sample)) throw StrataException.validation([{ field: 'query', message: 'must be an object' }]);
    const parseProblems: FieldError[] = [];
    parseCanonical(c, sample, parseProblems);
    await resolveJoins(scope, collections, c, definition, this.queries.joinSettings(), parseProblems);
    // A part already reported (a placeholder where a field name goes) is not reported twice.
    const reported = problems.map((p) => p.field);
    const ownProblems = problems.length;
    for (const p of parseProblems) {
      const field = `query.${p.field}`;
      if (!reported.some((r) => field === r || field.startsWith(`${r}.`))) problems.push({ field, message: p.message });
    }
    if (problems.length) {
      throw StrataException.validation(
        problems,
        ownProblems === 0 ? 'The query does not fit its collection' : 'The saved query is not valid',
      );
    }
    return { resource, variables, legacy: scan.legacy };
  }
}

function declarations(
  raw: Record<string, unknown> | undefined,
  problems: FieldError[],
): Record<string, VariableDeclaration> {
  // A Map, then own properties: a variable may be called toString or valueOf.
  const out = new Map<string, VariableDeclaration>();
  for (const [name, value] of Object.entries(raw ?? {})) {
    const at = `variables.${name}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      problems.push({ field: at, message: 'is not a variable name' });
      continue;
    }
    if (!isPlainObject(value) || !(VARIABLE_TYPES as readonly unknown[]).includes(value['type'])) {
      problems.push({ field: `${at}.type`, message: `must be one of: ${VARIABLE_TYPES.join(', ')}` });
      continue;
    }
    const type = value['type'] as VariableDeclaration['type'];
    const required = value['required'];
    if (required !== undefined && typeof required !== 'boolean')
      problems.push({ field: `${at}.required`, message: 'must be a boolean' });
    const unknown = Object.keys(value).filter((k) => !['type', 'required', 'default'].includes(k));
    for (const key of unknown)
      problems.push({ field: `${at}.${key}`, message: 'is not a variable field (type, required, default)' });
    if (value['default'] !== undefined && !fitsType(type, value['default'])) {
      problems.push({ field: `${at}.default`, message: `must be a ${type}` });
    }
    out.set(name, {
      type,
      ...(required !== undefined ? { required: required === true } : {}),
      ...(value['default'] !== undefined ? { default: value['default'] } : {}),
    });
  }
  return Object.fromEntries(out);
}

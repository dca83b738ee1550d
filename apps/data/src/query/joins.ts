import type { Collection, FieldError } from '@strata/contracts';
import { StrataException } from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import type { CollectionsRepository } from '../collections/collections.repository.js';
import { isPlainObject, show } from '../schema/issues.js';
import { JOIN_TYPES, type CompiledJoinSpec, type JoinType } from '../compiler/compile-join.js';
import { resolveField } from '../compiler/resolve-field.js';

export interface JoinSettings {
  readonly maxJoins: number;
  readonly outerJoinsEnabled: boolean;
}

export interface ResolvedJoins {
  readonly specs: CompiledJoinSpec[];
  /** The joined collections, by alias (for presenting their records). */
  readonly collections: Map<string, Collection>;
}

const PLACEHOLDER = /\$\{|\{\{/;
const ALIAS = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * Reads `joins` (or promotes a legacy single `join`) and checks each clause:
 * identifier slots (foreignSlug, localField, foreignField, alias, joinType)
 * accept literals only; the foreign collection is in the same workspace; both
 * fields exist; aliases are unique; right and full joins only when the operator
 * enabled them; at most `maxJoins`. A legacy join with a non-empty `joinWhere`
 * cannot be promoted: 422.
 */
export async function resolveJoins(
  scope: WorkspaceScope,
  collectionsOfScope: Pick<CollectionsRepository, 'find'>,
  c: Collection,
  definition: { joins?: unknown; join?: unknown },
  settings: JoinSettings,
  problems: FieldError[],
): Promise<ResolvedJoins | undefined> {
  let raw = definition.joins;
  let base = 'joins';
  if (definition.join !== undefined) {
    const legacy = definition.join;
    if (
      isPlainObject(legacy) &&
      legacy['joinWhere'] !== undefined &&
      !(isPlainObject(legacy['joinWhere']) && Object.keys(legacy['joinWhere']).length === 0)
    ) {
      throw StrataException.unprocessable(
        'A legacy join with a joinWhere cannot be promoted: re-author the query with joins and a top-level where',
        [{ field: 'join.joinWhere', message: 'move these conditions to the top-level where' }],
      );
    }
    if (raw !== undefined) {
      problems.push({ field: 'join', message: 'give joins or the older join, not both' });
      return undefined;
    }
    const { joinWhere: _ignored, ...promoted } = isPlainObject(legacy) ? legacy : {};
    raw = [promoted];
    base = 'join';
  }
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw) || raw.length === 0) {
    problems.push({ field: base, message: 'must be a non-empty array of join clauses' });
    return undefined;
  }
  if (raw.length > settings.maxJoins) {
    problems.push({ field: base, message: `a query holds at most ${settings.maxJoins} joins (DATA_QUERY_MAX_JOINS)` });
    return undefined;
  }
  const specs: CompiledJoinSpec[] = [];
  const collections = new Map<string, Collection>();
  for (const [i, clause] of raw.entries()) {
    const at = base === 'join' ? 'join' : `joins[${i}]`;
    if (!isPlainObject(clause)) {
      problems.push({ field: at, message: 'must be {foreignSlug, localField, foreignField, alias, joinType?}' });
      continue;
    }
    const text = (key: string, required: boolean): string | undefined => {
      const value = clause[key];
      if (value === undefined && !required) return undefined;
      if (typeof value !== 'string' || value === '') {
        problems.push({ field: `${at}.${key}`, message: 'is required: a literal string' });
        return undefined;
      }
      if (PLACEHOLDER.test(value)) {
        problems.push({ field: `${at}.${key}`, message: 'accepts literals only: placeholders are not allowed here' });
        return undefined;
      }
      return value;
    };
    const foreignSlug = text('foreignSlug', true);
    const localField = text('localField', true);
    const foreignField = text('foreignField', true);
    const alias = text('alias', base !== 'join') ?? foreignSlug?.replace(/-/g, '_');
    const joinType = (text('joinType', false) ?? 'inner') as JoinType;
    for (const key of Object.keys(clause)) {
      if (!['foreignSlug', 'localField', 'foreignField', 'alias', 'joinType'].includes(key)) {
        problems.push({ field: `${at}.${key}`, message: 'is not a join field' });
      }
    }
    if (!(JOIN_TYPES as readonly string[]).includes(joinType)) {
      problems.push({
        field: `${at}.joinType`,
        message: `must be one of: ${JOIN_TYPES.join(', ')} (got ${show(joinType)})`,
      });
      continue;
    }
    if ((joinType === 'right' || joinType === 'full') && !settings.outerJoinsEnabled) {
      problems.push({
        field: `${at}.joinType`,
        message: `${joinType} joins are disabled (DATA_QUERY_OUTER_JOINS_ENABLED)`,
      });
      continue;
    }
    if (alias !== undefined && (!ALIAS.test(alias) || collections.has(alias))) {
      problems.push({
        field: `${at}.alias`,
        message: collections.has(alias) ? `duplicates the alias ${alias}` : 'must be a name (letters, digits, _)',
      });
      continue;
    }
    if (!foreignSlug || !localField || !foreignField || !alias) continue;
    let foreign: Collection;
    try {
      foreign = await collectionsOfScope.find(scope, { slug: foreignSlug });
    } catch {
      problems.push({
        field: `${at}.foreignSlug`,
        message: `names no collection in this workspace: ${show(foreignSlug)}`,
      });
      continue;
    }
    const local = resolveField(localField, c, true);
    const remote = resolveField(foreignField, foreign, true);
    if ('problem' in local) problems.push({ field: `${at}.localField`, message: local.problem });
    if ('problem' in remote)
      problems.push({ field: `${at}.foreignField`, message: remote.problem.replace('this collection', foreignSlug) });
    if ('problem' in local || 'problem' in remote) continue;
    collections.set(alias, foreign);
    specs.push({ alias, type: joinType, foreignCollectionId: foreign.id, local: local.ref, foreign: remote.ref });
  }
  return { specs, collections };
}

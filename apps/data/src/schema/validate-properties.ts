import {
  ARRAY_ITEM_TYPES,
  COMPUTED_MODES,
  ON_DELETE_RULES,
  PROPERTY_TYPES,
  RELATIONSHIPS,
  RENDER_AS,
  type ArrayItems,
  type ArrayProperty,
  type DatetimeProperty,
  type NumberProperty,
  type ObjectProperty,
  type PropertyDefinition,
  type PropertyType,
  type ReferenceProperty,
  type StringProperty,
} from '@strata/contracts';
import { parseIsoDatetime } from './datetime.js';
import { expressionProblem } from './expressions.js';
import { FieldReader } from './fields.js';
import { at, isPlainObject, show, Issues } from './issues.js';
import { compilePattern } from './pattern.js';
import { checkReferences, type ReferenceContext } from './references.js';
import { checkValue } from './value-check.js';

export const PROPERTY_LIMITS = {
  maxPropertiesPerLevel: 200,
  maxDepth: 5,
  maxNameLength: 64,
  maxEnumValues: 500,
  maxPatternLength: 1000,
  maxStringLength: 1_000_000,
} as const;

/** Property names: a letter, then letters, digits or `_` (they are addressed as `data.<name>` in queries). */
export const PROPERTY_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

const COMMON_KEYS = [
  'id',
  'name',
  'type',
  'description',
  'required',
  'nullable',
  'default',
  'enum',
  'isUnique',
  'immutable',
  'indexed',
];
const TYPE_KEYS: Record<PropertyType, string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'renderAs', 'isSecret', 'not'],
  number: [
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'multipleOf',
    'expression',
    'computedMode',
    'autoIncrement',
  ],
  boolean: [],
  datetime: ['earliestDate', 'latestDate', 'exclusiveEarliest', 'exclusiveLatest', 'expression', 'computedMode'],
  array: ['items', 'itemSchema', 'strictProperties', 'isStrict', 'minItems', 'maxItems', 'uniqueItems'],
  object: ['properties', 'requiredProperties', 'strictProperties'],
  reference: ['target', 'targetField', 'displayField', 'relationship', 'onDelete'],
};
const ITEM_KEYS: Record<(typeof ARRAY_ITEM_TYPES)[number], string[]> = {
  string: ['type', 'minLength', 'maxLength', 'pattern', 'enum', 'not'],
  number: ['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'enum'],
  boolean: ['type', 'enum'],
  datetime: ['type', 'earliestDate', 'latestDate', 'exclusiveEarliest', 'exclusiveLatest', 'enum'],
  object: ['type'],
};
const ALL_KEYS = new Set([...COMMON_KEYS, ...Object.values(TYPE_KEYS).flat()]);

export interface PropertyContext extends ReferenceContext {
  /** Generates ids for properties that arrive without one. */
  readonly newId: () => string;
}

export interface ValidatedProperties {
  readonly properties: PropertyDefinition[];
  readonly issues: Issues;
}

/**
 * Validates a collection's property definitions, type by type, and returns them
 * normalised (ids generated, defaults of the flags filled in) together with one
 * issue per offending field, each with a path such as `properties[2].maxLength`.
 * Pure, given the context: the collections that references may target.
 */
export function validateProperties(raw: unknown, ctx: PropertyContext, path = 'properties'): ValidatedProperties {
  const issues = new Issues();
  const validator = new PropertyValidator(ctx, issues);
  const properties = validator.list(raw, path, 1, true);
  checkReferences(properties, validator.topLevelIndexes, path, ctx, issues);
  return { properties, issues };
}

class PropertyValidator {
  /** The input index of each top-level property kept (invalid ones are dropped), for error paths. */
  readonly topLevelIndexes: number[] = [];

  constructor(
    private readonly ctx: PropertyContext,
    private readonly issues: Issues,
  ) {}

  list(raw: unknown, path: string, depth: number, topLevel: boolean): PropertyDefinition[] {
    if (!Array.isArray(raw)) {
      this.issues.add(path, 'must be an array of property definitions');
      return [];
    }
    if (raw.length > PROPERTY_LIMITS.maxPropertiesPerLevel) {
      this.issues.add(path, `must have at most ${PROPERTY_LIMITS.maxPropertiesPerLevel} properties`);
      return [];
    }
    const out: PropertyDefinition[] = [];
    const names = new Map<string, number>();
    const ids = new Map<string, number>();
    raw.forEach((item, i) => {
      const property = this.property(item, at(path, i), depth, topLevel);
      if (!property) return;
      const sameName = names.get(property.name);
      if (sameName !== undefined) {
        this.issues.add(at(at(path, i), 'name'), `duplicates the name of ${at(path, sameName)}: names must be unique`);
      } else names.set(property.name, i);
      const sameId = ids.get(property.id);
      if (sameId !== undefined) {
        this.issues.add(at(at(path, i), 'id'), `duplicates the id of ${at(path, sameId)}: ids must be unique`);
      } else ids.set(property.id, i);
      out.push(property);
      if (topLevel) this.topLevelIndexes.push(i);
    });
    return out;
  }

  private property(raw: unknown, path: string, depth: number, topLevel: boolean): PropertyDefinition | undefined {
    if (!isPlainObject(raw)) {
      this.issues.add(path, 'must be a property definition object');
      return undefined;
    }
    const r = new FieldReader(raw, path, this.issues);
    const name = r.string('name', { nonEmpty: true, maxLength: PROPERTY_LIMITS.maxNameLength });
    if (!r.has('name')) r.problem('name', 'is required');
    else if (name !== undefined && !PROPERTY_NAME.test(name)) {
      r.problem('name', 'must start with a letter and contain only letters, digits and _');
    }
    if (!r.has('type')) r.problem('type', `is required (one of: ${PROPERTY_TYPES.join(', ')})`);
    const type = r.oneOf('type', PROPERTY_TYPES);
    if (type === undefined) return undefined;
    if (type === 'reference' && !topLevel) r.problem('type', 'reference properties are only allowed at the top level');

    const allowed = new Set([...COMMON_KEYS, ...TYPE_KEYS[type]]);
    r.onlyKeys(allowed, (key) =>
      ALL_KEYS.has(key) ? `does not apply to ${type} properties` : 'is not a property-definition field',
    );

    const common = {
      id: r.string('id', { nonEmpty: true, maxLength: 64 }) ?? this.ctx.newId(),
      name: name ?? '',
      ...optional('description', r.string('description', { maxLength: 2000 })),
      required: r.boolean('required') ?? false,
      nullable: r.boolean('nullable') ?? false,
      isUnique: r.boolean('isUnique') ?? false,
      immutable: r.boolean('immutable') ?? false,
      ...(r.boolean('indexed') ? { indexed: true as const } : {}),
    };
    const definition = this.typed(type, r, path, depth, topLevel, common);
    if (!definition) return undefined;
    this.enumAndDefault(definition, r);
    this.crossFieldRules(definition, r, topLevel);
    return name === undefined ? undefined : definition;
  }

  private typed(
    type: PropertyType,
    r: FieldReader,
    path: string,
    depth: number,
    topLevel: boolean,
    common: CommonFields,
  ): PropertyDefinition | undefined {
    switch (type) {
      case 'string':
        return {
          ...common,
          type,
          ...stringConstraints(r),
          ...optional('renderAs', r.oneOf('renderAs', RENDER_AS)),
          isSecret: r.boolean('isSecret') ?? false,
        };
      case 'number':
        return { ...common, type, ...numberConstraints(r), ...computed(r), ...autoIncrement(r) };
      case 'boolean':
        return { ...common, type };
      case 'datetime':
        return { ...common, type, ...datetimeConstraints(r), ...computed(r) };
      case 'array':
        return this.array(r, path, depth, common);
      case 'object':
        return this.object(r, path, depth, common);
      case 'reference':
        return topLevel ? reference(r, common) : undefined;
    }
  }

  private array(r: FieldReader, path: string, depth: number, common: CommonFields): ArrayProperty | undefined {
    const items = this.items(r);
    const strict = r.boolean('strictProperties');
    const legacyStrict = r.boolean('isStrict');
    if (strict !== undefined && legacyStrict !== undefined && strict !== legacyStrict) {
      r.problem('isStrict', 'contradicts strictProperties (isStrict is its older name)');
    }
    let itemSchema: PropertyDefinition[] | undefined;
    if (items?.type === 'object') {
      if (depth >= PROPERTY_LIMITS.maxDepth) {
        r.problem('itemSchema', `nests too deeply (at most ${PROPERTY_LIMITS.maxDepth} levels)`);
      } else if (!r.has('itemSchema')) {
        r.problem('itemSchema', 'is required, with at least one property, when items.type is object');
      } else {
        itemSchema = this.list(r.value('itemSchema'), r.fieldPath('itemSchema'), depth + 1, false);
        if (Array.isArray(r.value('itemSchema')) && (r.value('itemSchema') as unknown[]).length === 0) {
          r.problem('itemSchema', 'must have at least one property when items.type is object');
        }
      }
    } else if (r.has('itemSchema')) {
      r.problem('itemSchema', 'applies only when items.type is object');
    }
    const minItems = r.integer('minItems', { min: 0 });
    const maxItems = r.integer('maxItems', { min: 0 });
    if (minItems !== undefined && maxItems !== undefined && minItems > maxItems) {
      r.problem('minItems', `must not be greater than maxItems (${maxItems})`);
    }
    if (!items) return undefined;
    return {
      ...common,
      type: 'array',
      items,
      ...optional('itemSchema', itemSchema),
      strictProperties: strict ?? legacyStrict ?? true,
      ...optional('minItems', minItems),
      ...optional('maxItems', maxItems),
      uniqueItems: r.boolean('uniqueItems') ?? false,
    };
  }

  private items(r: FieldReader): ArrayItems | undefined {
    if (!r.has('items')) {
      r.problem('items', `is required: {type: ${ARRAY_ITEM_TYPES.join(' | ')}}`);
      return undefined;
    }
    const raw = r.value('items');
    if (!isPlainObject(raw)) {
      r.problem('items', 'must be an object such as {"type": "string"}');
      return undefined;
    }
    const ir = new FieldReader(raw, r.fieldPath('items'), this.issues);
    if (raw['type'] === 'array') {
      ir.problem('type', 'array is not allowed as an item type (no arrays of arrays)');
      return undefined;
    }
    if (!ir.has('type')) ir.problem('type', `is required (one of: ${ARRAY_ITEM_TYPES.join(', ')})`);
    const type = ir.oneOf('type', ARRAY_ITEM_TYPES);
    if (type === undefined) return undefined;
    ir.onlyKeys(new Set(ITEM_KEYS[type]), () => `does not apply to ${type} items`);
    let items: ArrayItems;
    switch (type) {
      case 'string':
        items = { type, ...stringConstraints(ir) };
        break;
      case 'number':
        items = { type, ...numberConstraints(ir) };
        break;
      case 'datetime':
        items = { type, ...datetimeConstraints(ir) };
        break;
      case 'boolean':
        items = { type };
        break;
      case 'object':
        return { type };
    }
    this.enumAndDefault(items, ir);
    return items;
  }

  private object(r: FieldReader, path: string, depth: number, common: CommonFields): ObjectProperty | undefined {
    let properties: PropertyDefinition[] = [];
    if (depth >= PROPERTY_LIMITS.maxDepth) {
      r.problem('properties', `nests too deeply (at most ${PROPERTY_LIMITS.maxDepth} levels)`);
    } else if (r.has('properties')) {
      properties = this.list(r.value('properties'), r.fieldPath('properties'), depth + 1, false);
    }
    const names = new Set(properties.map((p) => p.name));
    const required: string[] = [];
    (r.array('requiredProperties') ?? []).forEach((name, i) => {
      const field = at(r.fieldPath('requiredProperties'), i);
      if (typeof name !== 'string') this.issues.add(field, 'must be a property name');
      else if (!names.has(name)) this.issues.add(field, `names no property of this object: ${show(name)}`);
      else required.push(name);
    });
    return {
      ...common,
      type: 'object',
      properties,
      requiredProperties: required,
      strictProperties: r.boolean('strictProperties') ?? false,
    };
  }

  /** Enum values must satisfy the other constraints; the default must satisfy all of them. */
  private enumAndDefault(definition: PropertyDefinition | ArrayItems, r: FieldReader): void {
    const structured = definition.type === 'array' || definition.type === 'object' || definition.type === 'reference';
    if (structured && r.has('enum')) r.problem('enum', `does not apply to ${definition.type} properties`);
    const values = structured ? undefined : r.array('enum', { maxItems: PROPERTY_LIMITS.maxEnumValues });
    if (values !== undefined) {
      if (values.length === 0) r.problem('enum', 'must list at least one value');
      const seen = new Set<string>();
      values.forEach((value, i) => {
        const field = at(r.fieldPath('enum'), i);
        if (value === null) return this.issues.add(field, 'must not be null');
        checkValue(definition, value, field, this.issues, { enumValue: true });
        const key = JSON.stringify(value);
        if (seen.has(key)) this.issues.add(field, `duplicates ${show(value)}`);
        seen.add(key);
      });
      (definition as { enum?: unknown[] }).enum = values;
      if (definition.type === 'string' && definition.not) {
        const overlap = definition.not.filter((v) => values.includes(v));
        if (overlap.length) r.problem('not', `must not overlap enum: ${show(overlap)}`);
      }
    }
    if (r.has('default') && 'name' in definition) {
      checkValue(definition, r.value('default'), r.fieldPath('default'), this.issues);
      definition.default = r.value('default');
    } else if (r.has('default')) {
      r.problem('default', 'does not apply to array items');
    }
  }

  private crossFieldRules(definition: PropertyDefinition, r: FieldReader, topLevel: boolean): void {
    for (const flag of ['isUnique', 'indexed'] as const) {
      const problem = definition[flag] ? notKeyable(definition, topLevel) : undefined;
      if (problem) r.problem(flag, problem);
    }
    if (definition.type === 'number' || definition.type === 'datetime') {
      if (definition.expression !== undefined) {
        if (!topLevel) r.problem('expression', 'computed fields are only supported at the top level');
        if (definition.default !== undefined) r.problem('default', 'does not apply to computed fields');
        if (definition.required) r.problem('required', 'does not apply to computed fields (their value is computed)');
      }
    }
    if (definition.type === 'number' && definition.autoIncrement) {
      if (!topLevel) r.problem('autoIncrement', 'is only supported on top-level properties');
      if (definition.expression !== undefined) r.problem('autoIncrement', 'cannot be combined with expression');
      if (definition.default !== undefined) r.problem('default', 'does not apply to autoIncrement fields');
    }
    if (definition.type === 'reference' && definition.onDelete === 'set_null' && !definition.nullable) {
      r.problem('onDelete', 'set_null requires nullable: true');
    }
  }
}

type CommonFields = Pick<
  PropertyDefinition,
  'id' | 'name' | 'description' | 'required' | 'nullable' | 'isUnique' | 'immutable'
>;

function stringConstraints(r: FieldReader): Pick<StringProperty, 'minLength' | 'maxLength' | 'pattern' | 'not'> {
  const minLength = r.integer('minLength', { min: 0, max: PROPERTY_LIMITS.maxStringLength });
  const maxLength = r.integer('maxLength', { min: 0, max: PROPERTY_LIMITS.maxStringLength });
  if (minLength !== undefined && maxLength !== undefined && minLength > maxLength) {
    r.problem('minLength', `must not be greater than maxLength (${maxLength})`);
  }
  let pattern = r.string('pattern', { nonEmpty: true, maxLength: PROPERTY_LIMITS.maxPatternLength });
  if (pattern !== undefined) {
    const compiled = compilePattern(pattern);
    if (typeof compiled === 'string') {
      r.problem('pattern', `is not a valid regular expression: ${compiled}`);
      pattern = undefined;
    }
  }
  let not: string[] | undefined;
  const rawNot = r.array('not', { maxItems: PROPERTY_LIMITS.maxEnumValues });
  if (rawNot !== undefined) {
    not = [];
    rawNot.forEach((v, i) => {
      if (typeof v === 'string') not!.push(v);
      else r.problem(`not[${i}]`, 'must be a string');
    });
  }
  return {
    ...optional('minLength', minLength),
    ...optional('maxLength', maxLength),
    ...optional('pattern', pattern),
    ...optional('not', not),
  };
}

function numberConstraints(
  r: FieldReader,
): Pick<NumberProperty, 'minimum' | 'maximum' | 'exclusiveMinimum' | 'exclusiveMaximum' | 'multipleOf'> {
  const minimum = r.number('minimum');
  const maximum = r.number('maximum');
  const exclusiveMinimum = r.boolean('exclusiveMinimum') ?? false;
  const exclusiveMaximum = r.boolean('exclusiveMaximum') ?? false;
  if (minimum !== undefined && maximum !== undefined) {
    if (minimum > maximum) r.problem('minimum', `must not be greater than maximum (${maximum})`);
    else if (minimum === maximum && (exclusiveMinimum || exclusiveMaximum)) {
      r.problem('minimum', 'equals maximum with an exclusive bound: no value is allowed');
    }
  }
  return {
    ...optional('minimum', minimum),
    ...optional('maximum', maximum),
    exclusiveMinimum,
    exclusiveMaximum,
    ...optional('multipleOf', r.number('multipleOf', { positive: true })),
  };
}

function datetimeConstraints(
  r: FieldReader,
): Pick<DatetimeProperty, 'earliestDate' | 'latestDate' | 'exclusiveEarliest' | 'exclusiveLatest'> {
  const read = (key: 'earliestDate' | 'latestDate'): [string, number] | undefined => {
    const value = r.string(key);
    if (value === undefined) return undefined;
    const instant = parseIsoDatetime(value);
    if (instant === undefined) {
      r.problem(key, `must be an ISO 8601 date-time (got ${show(value)})`);
      return undefined;
    }
    return [value, instant];
  };
  const earliest = read('earliestDate');
  const latest = read('latestDate');
  if (earliest && latest && earliest[1] >= latest[1])
    r.problem('earliestDate', `must be before latestDate (${latest[0]})`);
  return {
    ...optional('earliestDate', earliest?.[0]),
    ...optional('latestDate', latest?.[0]),
    exclusiveEarliest: r.boolean('exclusiveEarliest') ?? false,
    exclusiveLatest: r.boolean('exclusiveLatest') ?? false,
  };
}

function computed(r: FieldReader): Pick<NumberProperty, 'expression' | 'computedMode'> {
  const expression = r.string('expression');
  const mode = r.oneOf('computedMode', COMPUTED_MODES);
  if (expression !== undefined) {
    const problem = expressionProblem(expression);
    if (problem) r.problem('expression', problem);
    return { expression, computedMode: mode ?? 'persisted' };
  }
  if (mode !== undefined) r.problem('computedMode', 'requires expression');
  return {};
}

function autoIncrement(r: FieldReader): Pick<NumberProperty, 'autoIncrement'> {
  const ar = r.object('autoIncrement', 'an object {startAt, incrementBy}');
  if (!ar) return {};
  ar.onlyKeys(new Set(['startAt', 'incrementBy']), () => 'is not an autoIncrement field');
  const startAt = ar.integer('startAt', { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }) ?? 1;
  const incrementBy = ar.integer('incrementBy', { min: 1, max: 1_000_000 }) ?? 1;
  return { autoIncrement: { startAt, incrementBy } };
}

function reference(r: FieldReader, common: CommonFields): ReferenceProperty | undefined {
  const target = r.string('target', { nonEmpty: true, maxLength: 100 });
  if (!r.has('target')) r.problem('target', 'is required: the recordSlug of a collection in this workspace');
  const relationship = r.oneOf('relationship', RELATIONSHIPS);
  if (!r.has('relationship')) r.problem('relationship', `is required (one of: ${RELATIONSHIPS.join(', ')})`);
  const onDelete = r.oneOf('onDelete', ON_DELETE_RULES);
  if (!r.has('onDelete')) r.problem('onDelete', `is required (one of: ${ON_DELETE_RULES.join(', ')})`);
  const targetField = r.string('targetField', { nonEmpty: true, maxLength: 64 }) ?? 'id';
  const displayField = r.string('displayField', { nonEmpty: true, maxLength: 64 });
  if (target === undefined || relationship === undefined || onDelete === undefined) return undefined;
  return {
    ...common,
    type: 'reference',
    target,
    targetField,
    ...optional('displayField', displayField),
    relationship,
    onDelete,
  };
}

/** `{key: value}` when value is defined, `{}` otherwise (keeps absent fields absent). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [P in K]?: V });
}

/** Why a property cannot hold a per-value key (isUnique, indexed); undefined when it can. */
function notKeyable(definition: PropertyDefinition, topLevel: boolean): string | undefined {
  if (definition.type === 'array' || definition.type === 'object')
    return `does not apply to ${definition.type} properties`;
  if (definition.type === 'reference' && definition.relationship === 'many-to-many')
    return 'does not apply to many-to-many references';
  if (!topLevel) return 'is only supported on top-level properties';
  if (definition.type === 'string' && definition.isSecret)
    return 'cannot be combined with isSecret (secret values are encrypted)';
  return undefined;
}

import { describe, expect, it } from '@jest/globals';
import type { PropertyDefinition } from '@strata/contracts';
import { validateProperties, type PropertyContext } from './validate-properties.js';

let counter = 0;
const authors: PropertyDefinition[] = [
  {
    id: 'a1',
    name: 'email',
    type: 'string',
    required: true,
    nullable: false,
    isUnique: true,
    immutable: false,
    isSecret: false,
  },
  {
    id: 'a2',
    name: 'token',
    type: 'string',
    required: false,
    nullable: false,
    isUnique: false,
    immutable: false,
    isSecret: true,
  },
];
function context(extra: Partial<PropertyContext> = {}): PropertyContext {
  return {
    collectionSlug: 'posts',
    collections: new Map([
      ['authors', { recordSlug: 'authors', properties: authors }],
      // comments → posts: a reference from posts to comments would close the loop.
      [
        'comments',
        {
          recordSlug: 'comments',
          properties: [
            {
              id: 'c1',
              name: 'post',
              type: 'reference',
              target: 'posts',
              targetField: 'id',
              relationship: 'many-to-one',
              onDelete: 'cascade',
              required: false,
              nullable: false,
              isUnique: false,
              immutable: false,
            },
          ],
        },
      ],
    ]),
    newId: () => `gen-${++counter}`,
    ...extra,
  };
}

function issuesOf(properties: unknown): { field: string; message: string }[] {
  return [...validateProperties(properties, context()).issues.list];
}

/** Each case: a property list and the issues expected, as [field, message pattern]. */
const INVALID: [string, unknown, [string, RegExp][]][] = [
  ['not an array', { name: 'x' }, [['properties', /must be an array/]]],
  ['item not an object', ['title'], [['properties[0]', /must be a property definition object/]]],
  [
    'missing name and type',
    [{}],
    [
      ['properties[0].name', /is required/],
      ['properties[0].type', /is required/],
    ],
  ],
  ['bad name', [{ name: '1st', type: 'string' }], [['properties[0].name', /must start with a letter/]]],
  ['unknown type', [{ name: 'a', type: 'text' }], [['properties[0].type', /must be one of: string, number/]]],
  [
    'duplicate names',
    [
      { name: 'a', type: 'string' },
      { name: 'a', type: 'number' },
    ],
    [['properties[1].name', /duplicates the name of properties\[0\]/]],
  ],
  [
    'key of another type',
    [{ name: 'a', type: 'number', maxLength: 3 }],
    [['properties[0].maxLength', /does not apply to number properties/]],
  ],
  [
    'unknown key',
    [{ name: 'a', type: 'string', colour: 'red' }],
    [['properties[0].colour', /is not a property-definition field/]],
  ],
  [
    'flag not boolean',
    [{ name: 'a', type: 'string', required: 'yes' }],
    [['properties[0].required', /must be a boolean/]],
  ],
  // string
  [
    'minLength > maxLength',
    [{ name: 'a', type: 'string', minLength: 5, maxLength: 2 }],
    [['properties[0].minLength', /greater than maxLength \(2\)/]],
  ],
  ['negative maxLength', [{ name: 'a', type: 'string', maxLength: -1 }], [['properties[0].maxLength', /at least 0/]]],
  [
    'fractional minLength',
    [{ name: 'a', type: 'string', minLength: 1.5 }],
    [['properties[0].minLength', /must be an integer/]],
  ],
  [
    'invalid regex',
    [{ name: 'a', type: 'string', pattern: '([a-z' }],
    [['properties[0].pattern', /not a valid regular expression/]],
  ],
  [
    'backreference (not RE2)',
    [{ name: 'a', type: 'string', pattern: '(a)\\1' }],
    [['properties[0].pattern', /not a valid regular expression/]],
  ],
  [
    'indexed on an object, nested, or with isSecret',
    [
      { name: 'o', type: 'object', indexed: true, properties: [{ name: 'n', type: 'number', indexed: true }] },
      { name: 's', type: 'string', isSecret: true, indexed: true },
      { name: 'i', type: 'string', indexed: 'yes' },
    ],
    [
      ['properties[0].indexed', /does not apply to object/],
      ['properties[0].properties[0].indexed', /only supported on top-level/],
      ['properties[1].indexed', /cannot be combined with isSecret/],
      ['properties[2].indexed', /boolean/],
    ],
  ],
  [
    'renderAs unknown',
    [{ name: 'a', type: 'string', renderAs: 'wysiwyg' }],
    [['properties[0].renderAs', /textarea, secret/]],
  ],
  [
    'default too long',
    [{ name: 'a', type: 'string', maxLength: 3, default: 'abcd' }],
    [['properties[0].default', /at most 3 characters/]],
  ],
  ['default wrong type', [{ name: 'a', type: 'string', default: 4 }], [['properties[0].default', /must be a string/]]],
  [
    'enum value breaks pattern',
    [{ name: 'a', type: 'string', pattern: '^[a-z]+$', enum: ['ok', 'NO'] }],
    [['properties[0].enum[1]', /must match the pattern/]],
  ],
  [
    'default outside enum',
    [{ name: 'a', type: 'string', enum: ['x', 'y'], default: 'z' }],
    [['properties[0].default', /must be one of \["x","y"\]/]],
  ],
  ['empty enum', [{ name: 'a', type: 'string', enum: [] }], [['properties[0].enum', /at least one value/]]],
  ['duplicate enum', [{ name: 'a', type: 'string', enum: ['x', 'x'] }], [['properties[0].enum[1]', /duplicates "x"/]]],
  [
    'not overlaps enum',
    [{ name: 'a', type: 'string', enum: ['x', 'y'], not: ['y'] }],
    [['properties[0].not', /must not overlap enum: \["y"\]/]],
  ],
  [
    'default in not',
    [{ name: 'a', type: 'string', not: ['admin'], default: 'admin' }],
    [['properties[0].default', /must not be "admin"/]],
  ],
  ['not with a number', [{ name: 'a', type: 'string', not: ['x', 3] }], [['properties[0].not[1]', /must be a string/]]],
  [
    'unique secret',
    [{ name: 'a', type: 'string', isSecret: true, isUnique: true }],
    [['properties[0].isUnique', /cannot be combined with isSecret/]],
  ],
  // number
  [
    'minimum > maximum',
    [{ name: 'n', type: 'number', minimum: 10, maximum: 1 }],
    [['properties[0].minimum', /greater than maximum \(1\)/]],
  ],
  [
    'empty exclusive range',
    [{ name: 'n', type: 'number', minimum: 1, maximum: 1, exclusiveMaximum: true }],
    [['properties[0].minimum', /no value is allowed/]],
  ],
  ['multipleOf zero', [{ name: 'n', type: 'number', multipleOf: 0 }], [['properties[0].multipleOf', /greater than 0/]]],
  [
    'default breaks exclusive minimum',
    [{ name: 'n', type: 'number', minimum: 0, exclusiveMinimum: true, default: 0 }],
    [['properties[0].default', /greater than 0/]],
  ],
  [
    'default not a multiple',
    [{ name: 'n', type: 'number', multipleOf: 5, default: 7 }],
    [['properties[0].default', /multiple of 5/]],
  ],
  [
    'enum above maximum',
    [{ name: 'n', type: 'number', maximum: 10, enum: [1, 11] }],
    [['properties[0].enum[1]', /at most 10/]],
  ],
  [
    'bad expression',
    [{ name: 'n', type: 'number', expression: 'price * (' }],
    [['properties[0].expression', /not a valid JSONata expression/]],
  ],
  [
    'expression defining a function',
    [{ name: 'n', type: 'number', expression: '($f := function($x){$f($x)}; $f(1))' }],
    [['properties[0].expression', /must not define functions/]],
  ],
  [
    'computedMode without expression',
    [{ name: 'n', type: 'number', computedMode: 'virtual' }],
    [['properties[0].computedMode', /requires expression/]],
  ],
  [
    'computed with default',
    [{ name: 'n', type: 'number', expression: 'a + 1', default: 3 }],
    [['properties[0].default', /does not apply to computed fields/]],
  ],
  [
    'autoIncrement step 0',
    [{ name: 'n', type: 'number', autoIncrement: { startAt: 1, incrementBy: 0 } }],
    [['properties[0].autoIncrement.incrementBy', /at least 1/]],
  ],
  [
    'autoIncrement unknown key',
    [{ name: 'n', type: 'number', autoIncrement: { start: 1 } }],
    [['properties[0].autoIncrement.start', /not an autoIncrement field/]],
  ],
  // boolean
  [
    'boolean default',
    [{ name: 'b', type: 'boolean', default: 'true' }],
    [['properties[0].default', /must be a boolean/]],
  ],
  [
    'boolean enum',
    [{ name: 'b', type: 'boolean', enum: [true, 'no'] }],
    [['properties[0].enum[1]', /must be a boolean/]],
  ],
  // datetime
  [
    'bad earliestDate',
    [{ name: 'd', type: 'datetime', earliestDate: '2026-13-01' }],
    [['properties[0].earliestDate', /ISO 8601/]],
  ],
  [
    'earliest after latest',
    [{ name: 'd', type: 'datetime', earliestDate: '2027-01-01', latestDate: '2026-01-01' }],
    [['properties[0].earliestDate', /before latestDate/]],
  ],
  [
    'default out of bounds',
    [{ name: 'd', type: 'datetime', latestDate: '2026-01-01T00:00:00Z', default: '2026-06-01T00:00:00Z' }],
    [['properties[0].default', /on or before 2026-01-01/]],
  ],
  [
    'default not a datetime',
    [{ name: 'd', type: 'datetime', default: 'yesterday' }],
    [['properties[0].default', /ISO 8601/]],
  ],
  [
    'exclusive bound excludes default',
    [
      {
        name: 'd',
        type: 'datetime',
        earliestDate: '2026-01-01',
        exclusiveEarliest: true,
        default: '2026-01-01T00:00:00Z',
      },
    ],
    [['properties[0].default', /after 2026-01-01/]],
  ],
  // array
  ['array without items', [{ name: 'l', type: 'array' }], [['properties[0].items', /is required/]]],
  [
    'array of arrays',
    [{ name: 'l', type: 'array', items: { type: 'array' } }],
    [['properties[0].items.type', /array is not allowed as an item type/]],
  ],
  [
    'array of references',
    [{ name: 'l', type: 'array', items: { type: 'reference' } }],
    [['properties[0].items.type', /must be one of: string, number, boolean, datetime, object/]],
  ],
  [
    'object items without itemSchema',
    [{ name: 'l', type: 'array', items: { type: 'object' } }],
    [['properties[0].itemSchema', /is required/]],
  ],
  [
    'object items with empty itemSchema',
    [{ name: 'l', type: 'array', items: { type: 'object' }, itemSchema: [] }],
    [['properties[0].itemSchema', /at least one property/]],
  ],
  [
    'itemSchema on string items',
    [{ name: 'l', type: 'array', items: { type: 'string' }, itemSchema: [{ name: 'a', type: 'string' }] }],
    [['properties[0].itemSchema', /applies only when items.type is object/]],
  ],
  [
    'itemSchema duplicate names',
    [
      {
        name: 'l',
        type: 'array',
        items: { type: 'object' },
        itemSchema: [
          { name: 'a', type: 'string' },
          { name: 'a', type: 'string' },
        ],
      },
    ],
    [['properties[0].itemSchema[1].name', /duplicates the name/]],
  ],
  [
    'minItems > maxItems',
    [{ name: 'l', type: 'array', items: { type: 'string' }, minItems: 3, maxItems: 1 }],
    [['properties[0].minItems', /greater than maxItems/]],
  ],
  [
    'item constraint of another type',
    [{ name: 'l', type: 'array', items: { type: 'number', maxLength: 3 } }],
    [['properties[0].items.maxLength', /does not apply to number items/]],
  ],
  [
    'items enum breaks items bound',
    [{ name: 'l', type: 'array', items: { type: 'number', maximum: 5, enum: [1, 9] } }],
    [['properties[0].items.enum[1]', /at most 5/]],
  ],
  [
    'isStrict contradicts strictProperties',
    [
      {
        name: 'l',
        type: 'array',
        items: { type: 'object' },
        itemSchema: [{ name: 'a', type: 'string' }],
        strictProperties: true,
        isStrict: false,
      },
    ],
    [['properties[0].isStrict', /contradicts strictProperties/]],
  ],
  [
    'unique array',
    [{ name: 'l', type: 'array', items: { type: 'string' }, isUnique: true }],
    [['properties[0].isUnique', /does not apply to array/]],
  ],
  [
    'array default breaks uniqueItems',
    [{ name: 'l', type: 'array', items: { type: 'string' }, uniqueItems: true, default: ['a', 'a'] }],
    [['properties[0].default[1]', /items must be unique/]],
  ],
  // object
  [
    'requiredProperties names nothing',
    [{ name: 'o', type: 'object', properties: [{ name: 'a', type: 'string' }], requiredProperties: ['a', 'b'] }],
    [['properties[0].requiredProperties[1]', /names no property of this object: "b"/]],
  ],
  [
    'nested duplicate names',
    [
      {
        name: 'o',
        type: 'object',
        properties: [
          { name: 'a', type: 'string' },
          { name: 'a', type: 'boolean' },
        ],
      },
    ],
    [['properties[0].properties[1].name', /duplicates the name/]],
  ],
  [
    'nested bad bound',
    [{ name: 'o', type: 'object', properties: [{ name: 'n', type: 'number', minimum: 3, maximum: 2 }] }],
    [['properties[0].properties[0].minimum', /greater than maximum/]],
  ],
  [
    'nested reference',
    [
      {
        name: 'o',
        type: 'object',
        properties: [
          { name: 'r', type: 'reference', target: 'authors', relationship: 'many-to-one', onDelete: 'restrict' },
        ],
      },
    ],
    [['properties[0].properties[0].type', /only allowed at the top level/]],
  ],
  [
    'nested unique',
    [{ name: 'o', type: 'object', properties: [{ name: 'a', type: 'string', isUnique: true }] }],
    [['properties[0].properties[0].isUnique', /only supported on top-level/]],
  ],
  [
    'object default missing required',
    [{ name: 'o', type: 'object', properties: [{ name: 'a', type: 'string', required: true }], default: {} }],
    [['properties[0].default.a', /is required/]],
  ],
  [
    'too deep',
    [
      {
        name: 'l1',
        type: 'object',
        properties: [
          {
            name: 'l2',
            type: 'object',
            properties: [
              {
                name: 'l3',
                type: 'object',
                properties: [
                  {
                    name: 'l4',
                    type: 'object',
                    properties: [{ name: 'l5', type: 'object', properties: [{ name: 'x', type: 'string' }] }],
                  },
                ],
              },
            ],
          },
        ],
      },
    ],
    [['properties[0].properties[0].properties[0].properties[0].properties[0].properties', /nests too deeply/]],
  ],
  // reference
  [
    'reference missing fields',
    [{ name: 'r', type: 'reference' }],
    [
      ['properties[0].target', /is required/],
      ['properties[0].relationship', /is required/],
      ['properties[0].onDelete', /is required/],
    ],
  ],
  [
    'unknown target',
    [{ name: 'r', type: 'reference', target: 'nope', relationship: 'many-to-one', onDelete: 'restrict' }],
    [['properties[0].target', /names no collection in this workspace: "nope"/]],
  ],
  [
    'bad relationship',
    [{ name: 'r', type: 'reference', target: 'authors', relationship: 'one-to-many', onDelete: 'restrict' }],
    [['properties[0].relationship', /many-to-one, one-to-one, many-to-many/]],
  ],
  [
    'set_null without nullable',
    [{ name: 'r', type: 'reference', target: 'authors', relationship: 'many-to-one', onDelete: 'set_null' }],
    [['properties[0].onDelete', /set_null requires nullable: true/]],
  ],
  [
    'missing targetField',
    [
      {
        name: 'r',
        type: 'reference',
        target: 'authors',
        targetField: 'handle',
        relationship: 'many-to-one',
        onDelete: 'restrict',
      },
    ],
    [['properties[0].targetField', /names no property of authors: "handle"/]],
  ],
  [
    'missing displayField',
    [
      {
        name: 'r',
        type: 'reference',
        target: 'authors',
        displayField: 'name',
        relationship: 'many-to-one',
        onDelete: 'restrict',
      },
    ],
    [['properties[0].displayField', /names no property of authors: "name"/]],
  ],
  [
    'targetField or displayField naming a secret',
    [
      {
        name: 'r',
        type: 'reference',
        target: 'authors',
        targetField: 'token',
        displayField: 'token',
        relationship: 'many-to-one',
        onDelete: 'restrict',
      },
    ],
    [
      ['properties[0].targetField', /names a secret field: "token"/],
      ['properties[0].displayField', /names a secret field: "token"/],
    ],
  ],
  [
    'circular reference',
    [{ name: 'r', type: 'reference', target: 'comments', relationship: 'many-to-one', onDelete: 'restrict' }],
    [['properties[0].target', /circular reference: posts → comments → posts/]],
  ],
  [
    'enum on a reference',
    [
      {
        name: 'r',
        type: 'reference',
        target: 'authors',
        relationship: 'many-to-one',
        onDelete: 'restrict',
        enum: ['x'],
      },
    ],
    [['properties[0].enum', /does not apply to reference properties/]],
  ],
  [
    'unique many-to-many',
    [
      {
        name: 'r',
        type: 'reference',
        target: 'authors',
        relationship: 'many-to-many',
        onDelete: 'restrict',
        isUnique: true,
      },
    ],
    [['properties[0].isUnique', /many-to-many/]],
  ],
];

describe('validateProperties: refused definitions', () => {
  it.each(INVALID)('%s', (_name, properties, expected) => {
    const issues = issuesOf(properties);
    for (const [field, message] of expected) {
      expect(issues).toContainEqual({ field, message: expect.stringMatching(message) });
    }
    expect(issues).toHaveLength(expected.length);
  });
});

describe('validateProperties: accepted definitions', () => {
  it('normalises every type, generating ids and filling defaults of the flags', () => {
    const { properties, issues } = validateProperties(
      [
        { name: 'title', type: 'string', minLength: 1, maxLength: 200, pattern: '^[^<>]*$', required: true },
        { name: 'status', type: 'string', enum: ['draft', 'published'], default: 'draft', not: ['deleted'] },
        { name: 'price', type: 'number', minimum: 0, exclusiveMinimum: true, multipleOf: 0.01, default: 0.1 },
        { name: 'total', type: 'number', expression: 'price * 1.2', computedMode: 'virtual' },
        { name: 'seq', type: 'number', autoIncrement: { startAt: 1000 } },
        { name: 'done', type: 'boolean', default: false },
        { name: 'due', type: 'datetime', earliestDate: '2020-01-01', latestDate: '2030-12-31T23:59:59Z' },
        { name: 'tags', type: 'array', items: { type: 'string', maxLength: 20 }, uniqueItems: true, maxItems: 10 },
        {
          name: 'lines',
          type: 'array',
          items: { type: 'object' },
          itemSchema: [{ name: 'sku', type: 'string', required: true }],
          isStrict: false,
        },
        {
          name: 'address',
          type: 'object',
          properties: [{ name: 'city', type: 'string' }],
          requiredProperties: ['city'],
        },
        {
          name: 'author',
          type: 'reference',
          target: 'authors',
          targetField: 'email',
          displayField: 'email',
          relationship: 'many-to-one',
          onDelete: 'set_null',
          nullable: true,
        },
        { name: 'parent', type: 'reference', target: 'posts', relationship: 'many-to-one', onDelete: 'cascade' },
        { id: 'kept-id', name: 'secret', type: 'string', isSecret: true, renderAs: 'secret' },
      ],
      context(),
    );
    expect(issues.list).toEqual([]);
    expect(properties).toHaveLength(13);
    expect(properties[0]).toEqual({
      id: expect.stringMatching(/^gen-/),
      name: 'title',
      type: 'string',
      minLength: 1,
      maxLength: 200,
      pattern: '^[^<>]*$',
      required: true,
      nullable: false,
      isUnique: false,
      immutable: false,
      isSecret: false,
    });
    expect(properties[3]).toMatchObject({ expression: 'price * 1.2', computedMode: 'virtual' });
    expect(properties[4]).toMatchObject({ autoIncrement: { startAt: 1000, incrementBy: 1 } });
    expect(properties[8]).toMatchObject({ strictProperties: false, itemSchema: [{ name: 'sku', required: true }] });
    expect(properties[9]).toMatchObject({ strictProperties: false, requiredProperties: ['city'] });
    expect(properties[10]).toMatchObject({ targetField: 'email', relationship: 'many-to-one', onDelete: 'set_null' });
    expect(properties[11]).toMatchObject({ target: 'posts', targetField: 'id' });
    expect(properties[12]).toMatchObject({ id: 'kept-id', isSecret: true });
  });

  it('accepts secret strings at any depth: in objects and in the objects of arrays', () => {
    const { properties, issues } = validateProperties(
      [
        {
          name: 'credentials',
          type: 'object',
          properties: [
            { name: 'token', type: 'string', isSecret: true },
            { name: 'inner', type: 'object', properties: [{ name: 'pin', type: 'string', isSecret: true }] },
          ],
        },
        {
          name: 'contacts',
          type: 'array',
          items: { type: 'object' },
          itemSchema: [{ name: 'phone', type: 'string', isSecret: true }],
        },
      ],
      context(),
    );
    expect(issues.list).toEqual([]);
    expect(properties[0]).toMatchObject({ properties: [{ isSecret: true }, { properties: [{ isSecret: true }] }] });
    expect(properties[1]).toMatchObject({ itemSchema: [{ isSecret: true }] });
  });

  it('accepts an empty list', () => {
    expect(issuesOf([])).toEqual([]);
  });

  it('defaults array strictProperties to true and object strictProperties to false', () => {
    const { properties } = validateProperties(
      [
        { name: 'l', type: 'array', items: { type: 'object' }, itemSchema: [{ name: 'a', type: 'string' }] },
        { name: 'o', type: 'object' },
      ],
      context(),
    );
    expect(properties[0]).toMatchObject({ strictProperties: true, uniqueItems: false });
    expect(properties[1]).toMatchObject({ strictProperties: false, properties: [], requiredProperties: [] });
  });
});

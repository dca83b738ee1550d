import { describe, expect, it } from '@jest/globals';
import type { PropertyDefinition } from '@strata/contracts';
import {
  convertForWrite,
  convertValue,
  migrateData,
  newOptionalProperties,
  planMigration,
  putBack,
} from './migration-plan.js';

const p = (def: Record<string, unknown>) => def as unknown as PropertyDefinition;

describe('planMigration', () => {
  it('takes type and constraint changes and new required properties, not presentation', () => {
    const before = [
      p({ name: 'a', type: 'string' }),
      p({ name: 'b', type: 'number', description: 'x' }),
      p({ name: 'c', type: 'string' }),
      p({ name: 'd', type: 'string' }),
    ];
    const after = [
      p({ name: 'a', type: 'number' }),
      p({ name: 'b', type: 'number', description: 'y', indexed: true }),
      p({ name: 'c', type: 'string', pattern: '^x' }),
      p({ name: 'd', type: 'string', isUnique: true }),
      p({ name: 'e', type: 'string', required: true, default: 'z' }),
      p({ name: 'f', type: 'string' }),
    ];
    expect(planMigration(before, after)).toEqual([
      { name: 'a', added: false },
      { name: 'c', added: false },
      { name: 'd', added: false },
      { name: 'e', added: true },
    ]);
  });

  it('needs nothing when a property only stops being required', () => {
    const before = [p({ name: 'r', type: 'string', required: true }), p({ name: 't', type: 'string', required: true })];
    const after = [
      p({ name: 'r', type: 'string', required: false }),
      p({ name: 't', type: 'string', required: false, maxLength: 3 }),
    ];
    expect(planMigration(before, after)).toEqual([{ name: 't', added: false }]);
  });

  it('leaves secret and computed properties alone', () => {
    expect(
      planMigration(
        [p({ name: 's', type: 'number' }), p({ name: 'v', type: 'string' })],
        [p({ name: 's', type: 'string', isSecret: true }), p({ name: 'v', type: 'number', expression: '1' })],
      ),
    ).toEqual([]);
  });
});

describe('new properties over values records hold', () => {
  const before = [p({ name: 'a', type: 'string' })];
  const after = [
    p({ name: 'a', type: 'string' }),
    p({ name: 'code', type: 'number', isUnique: true }),
    p({ name: 'tag', type: 'string', pattern: '^x' }),
    p({ name: 'need', type: 'string', required: true }),
    p({ name: 'hidden', type: 'string', isSecret: true }),
    p({ name: 'calc', type: 'number', expression: '1' }),
  ];

  it('asks about the optional ones a job would check', () => {
    expect(newOptionalProperties(before, after)).toEqual(['code', 'tag']);
  });

  it('migrates those records hold values for, like a changed property', () => {
    expect(planMigration(before, after, new Set(['code', 'hidden', 'calc']))).toEqual([
      { name: 'code', added: true },
      { name: 'need', added: true },
    ]);
  });

  it('keeps a collection whose records hold none on the fast path', () => {
    expect(planMigration(before, after, new Set())).toEqual([{ name: 'need', added: true }]);
    expect(planMigration(before, after.slice(0, 3))).toEqual([]);
  });
});

describe('convertValue', () => {
  it.each([
    [{ type: 'string' }, 42, '42'],
    [{ type: 'string' }, true, 'true'],
    [{ type: 'number' }, ' 12.5 ', 12.5],
    [{ type: 'number' }, '-1e3', -1000],
    [{ type: 'boolean' }, 'TRUE', true],
    [{ type: 'boolean' }, 0, false],
    [{ type: 'datetime' }, '2026-01-02', '2026-01-02T00:00:00.000Z'],
    [{ type: 'datetime' }, 0, '1970-01-01T00:00:00.000Z'],
    [{ type: 'array', items: { type: 'number' } }, ['1', 2], [1, 2]],
    [{ type: 'reference', relationship: 'many-to-many' }, 'x', ['x']],
    [{ type: 'number' }, null, null],
  ])('%j: %j → %j', (rules, value, expected) => {
    expect(convertValue(p(rules), value)).toEqual({ ok: true, value: expected });
  });

  it.each([
    [{ type: 'number' }, 'n/a'],
    [{ type: 'number' }, ''],
    [{ type: 'number' }, true],
    [{ type: 'boolean' }, 'yes'],
    [{ type: 'datetime' }, 'tomorrow'],
    [{ type: 'string' }, { a: 1 }],
    [{ type: 'object' }, 'x'],
    [{ type: 'array', items: { type: 'string' } }, 'x'],
  ])('%j refuses %j', (rules, value) => {
    expect(convertValue(p(rules), value)).toMatchObject({ ok: false, reason: expect.any(String) });
  });

  it('leaves a value of the type as it is (converting twice changes nothing)', () => {
    for (const [rules, value] of [
      [{ type: 'number' }, 3],
      [{ type: 'string' }, ' 3.0 '],
      [{ type: 'datetime' }, '2026-01-02T00:00:00.000Z'],
    ] as const) {
      const once = convertValue(p(rules), value);
      expect(once).toEqual({ ok: true, value });
    }
  });
});

describe('migrateData', () => {
  const fields = [
    { name: 'n', added: false },
    { name: 'tag', added: true },
  ];
  const target = [
    p({ name: 'n', type: 'number', maximum: 100 }),
    p({ name: 'tag', type: 'string', required: true, default: 'none' }),
  ];

  it('converts, fills a new required field from its default, and keeps what it replaced', () => {
    expect(migrateData(fields, target, { n: '7', other: 1 })).toEqual({
      data: { n: 7, tag: 'none', other: 1 },
      before: { n: ['7'], tag: [] },
      failures: [],
    });
  });

  it('lists a value that cannot convert or breaks a constraint, and leaves it', () => {
    const out = migrateData(fields, target, { n: '700', tag: 'x' });
    expect(out.data).toEqual({ n: '700', tag: 'x' });
    expect(out.failures).toEqual([{ field: 'n', reason: 'must be at most 100' }]);
  });

  it('lists a missing required field without a default', () => {
    const out = migrateData([{ name: 'r', added: true }], [p({ name: 'r', type: 'string', required: true })], {});
    expect(out.failures).toEqual([{ field: 'r', reason: expect.stringMatching(/is required/) }]);
  });

  it('convertForWrite converts what it can and leaves the rest to validation', () => {
    expect(convertForWrite(fields, target, { n: '5' })).toEqual({ n: 5 });
    expect(convertForWrite(fields, target, { n: 'x' })).toEqual({ n: 'x' });
  });
});

describe('putBack (cancel)', () => {
  const fields = [
    { name: 'n', added: false },
    { name: 'tag', added: true },
  ];
  const written = [
    p({ name: 'n', type: 'number' }),
    p({ name: 'tag', type: 'string', required: true, default: 'none' }),
  ];

  it('puts back what the job wrote, and leaves what a client wrote since', () => {
    const before = { n: [' 4.0 '], tag: [] } as Record<string, [] | [unknown]>;
    expect(putBack(fields, written, { n: 4, tag: 'none' }, before)).toEqual({ n: ' 4.0 ' });
    expect(putBack(fields, written, { n: 5, tag: 'mine' }, before)).toEqual({ n: 5, tag: 'mine' });
  });
});

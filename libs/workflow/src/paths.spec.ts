import { describe, expect, it } from '@jest/globals';
import { readPath, scopeByPath } from './paths.js';
import type { RunScope } from './types.js';

describe('scopeByPath', () => {
  const scope: RunScope = {
    input: { amount: 150 },
    context: { region: 'eu' },
    steps: { charge: { amount: 150 }, count: 3, name: 'ada', list: [1, 2], nothing: null, done: true },
  };

  it('wraps every step output under output, whatever its kind, and keeps input and context', () => {
    expect(scopeByPath(scope)).toEqual({
      input: { amount: 150 },
      context: { region: 'eu' },
      steps: {
        charge: { output: { amount: 150 } },
        count: { output: 3 },
        name: { output: 'ada' },
        list: { output: [1, 2] },
        nothing: { output: null },
        done: { output: true },
      },
    });
  });

  it('answers every path a decision reads at the same place in its own shape', () => {
    const byPath = scopeByPath(scope) as unknown as Record<string, unknown>;
    const at = (path: string): unknown =>
      path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], byPath);
    for (const path of [
      'input.amount',
      'context.region',
      'steps.charge.output.amount',
      'steps.count.output',
      'steps.list.output.1',
      'steps.nothing.output',
    ]) {
      expect({ path, value: at(path) }).toEqual({ path, value: readPath(scope, path).value });
    }
  });

  it('keeps a step id named __proto__ as a key, never as a prototype', () => {
    const steps = scopeByPath({ input: {}, context: {}, steps: JSON.parse('{"__proto__": {"x": 1}}') }).steps;
    expect(Object.keys(steps)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(steps)).toBe(Object.prototype);
    expect(JSON.stringify(steps)).toBe('{"__proto__":{"output":{"x":1}}}');
  });

  it('leaves the run scope it reads unchanged', () => {
    const before = JSON.stringify(scope);
    scopeByPath(scope);
    expect(JSON.stringify(scope)).toBe(before);
  });
});

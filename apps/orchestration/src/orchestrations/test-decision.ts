import type { JsonValue, RunScope } from '@strata/workflow';

const isObject = (v: unknown): v is Record<string, JsonValue> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The run scope a decision test reads: `testData` as `{input, context, steps:
 * {<stepId>: {output}}}` (the shape of the paths), or, when it has none of those
 * keys, `testData` as the run's input.
 */
export function scopeOfTestData(testData: Record<string, unknown>): RunScope {
  const data = testData as Record<string, JsonValue>;
  if (!['input', 'context', 'steps'].some((k) => Object.hasOwn(data, k))) {
    return { input: data, context: {}, steps: {} };
  }
  const steps: Record<string, JsonValue> = {};
  const given = data['steps'];
  if (isObject(given)) {
    for (const [id, step] of Object.entries(given)) {
      if (isObject(step) && Object.hasOwn(step, 'output')) steps[id] = step['output']!;
    }
  }
  return { input: data['input'] ?? {}, context: data['context'] ?? {}, steps };
}

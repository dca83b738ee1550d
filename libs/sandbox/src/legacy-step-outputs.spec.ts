import { afterAll, describe, expect, it } from '@jest/globals';
import { recordingBridge, runJob } from '../test/support.js';
import { createIsolatedVmEngine } from './isolated-vm-engine.js';
import type { JsonValue, SandboxJob } from './types.js';

const engine = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 50 });
afterAll(() => engine.close());

const SUNSET = { sunset: '2027-03-01' };
const params = {
  input: { amount: 3 },
  context: {},
  steps: {
    charge: { output: { amount: 150, output: 'inner' } },
    list: { output: [1, 2, 3] },
    count: { output: 7 },
    name: { output: 'ada' },
    nothing: { output: null },
  },
  orchestration: { runId: 'orun_1', stepId: 'next', attempt: 1 },
};

/** Runs `body` (the inside of run()) on the step's params, the old form kept or not. */
async function step(body: string, overrides: Partial<SandboxJob> = { legacyStepOutputs: SUNSET }) {
  const result = await engine.run(
    runJob(`async function run() { const s = executionParams.steps; ${body} }`, {
      executionParams: params as JsonValue,
      ...overrides,
    }),
    recordingBridge(),
  );
  expect(result.error).toBeUndefined();
  return { value: result.returnValue, warnings: result.logs.filter((l) => l.level === 'warn').map((l) => l.message) };
}

describe("an orchestration step's executionParams.steps", () => {
  it('answers the documented form, steps.<id>.output, without a warning', async () => {
    expect(
      await step(
        'return [s.charge.output.amount, s.list.output[1], s.count.output, s.name.output, s.nothing.output, JSON.stringify(s.count), Object.keys(s.charge)];',
      ),
    ).toEqual({ value: [150, 2, 7, 'ada', null, '{"output":7}', ['output']], warnings: [] });
  });

  it("answers the old form of an object's fields, warning once per step with the new path and the sunset", async () => {
    const r = await step("return [s.charge.amount, s.charge.amount, 'amount' in s.charge, s.charge.output];");
    expect(r.value).toEqual([150, 150, true, { amount: 150, output: 'inner' }]);
    expect(r.warnings).toEqual([
      "Deprecated: executionParams.steps.charge.amount reads step 'charge' output the old way; read " +
        'executionParams.steps.charge.output.amount instead. The old form is removed after 2027-03-01 (docs/orchestration.md).',
    ]);
  });

  it('answers the old form of a list (items, length, methods, iteration) and a primitive used as a value', async () => {
    const r = await step(
      'return [s.list[0], s.list.length, s.list.map((n) => n * 2), [...s.list], s.count + 1, `${s.name}!`, s.name.toUpperCase(), s.count > 5];',
    );
    expect(r.value).toEqual([1, 3, [2, 4, 6], [1, 2, 3], 8, 'ada!', 'ADA', true]);
    expect(r.warnings).toEqual([
      expect.stringMatching(/^Deprecated: executionParams\.steps\.list\.0 reads step 'list' output the old way/),
      expect.stringMatching(
        /^Deprecated: executionParams\.steps\.count used as a value reads step 'count'.*steps\.count\.output instead/,
      ),
      expect.stringMatching(/^Deprecated: executionParams\.steps\.name used as a value /),
    ]);
  });

  it('gives nothing of the old form to keys both forms have, to a null output, or to a key the output lacks', async () => {
    const r = await step(
      "return [typeof s.charge.hasOwnProperty, String(s.charge), s.nothing.amount === undefined, s.charge.missing === undefined, 'missing' in s.charge];",
    );
    expect(r).toEqual({ value: ['function', '[object Object]', true, true, false], warnings: [] });
  });

  it('leaves executionParams alone on a run without legacyStepOutputs: the old form reads nothing', async () => {
    const r = await step('return [s.charge.amount === undefined, s.charge.output.amount, s.count + 1];', {});
    expect(r).toEqual({ value: [true, 150, '[object Object]1'], warnings: [] });
  });
});

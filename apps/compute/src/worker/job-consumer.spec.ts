import { describe, expect, it } from '@jest/globals';
import { parseComputeJob } from './job-consumer.js';

describe('parseComputeJob', () => {
  const runId = '0b8e2f4c-5a1d-4c3e-9f7a-2d6b8c0e1f3a';

  it('takes a run id and a workspace slug', () => {
    expect(parseComputeJob({ runId, workspaceSlug: 'acme', extra: 1 })).toEqual({ runId, workspaceSlug: 'acme' });
  });

  it('keeps the run a job carries (a saved version, or a test run with its code), and drops one that does not parse', () => {
    const carried = {
      jobId: '5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
      functionId: null,
      functionVersion: null,
      code: 'async function run() { return { success: true }; }',
      functionCodeHash: 'a'.repeat(64),
      triggerId: null,
      executionSource: 'manual',
      params: 'sealed',
      paramsKeyVersion: 1,
      executionContext: { invocationDepth: 0 },
      limits: { wallMs: 1000 },
      createdBy: 'user-1',
      queuedAt: '2026-11-26T10:00:00.000Z',
    };
    expect(parseComputeJob({ runId, workspaceSlug: 'acme', run: carried })).toEqual({
      runId,
      workspaceSlug: 'acme',
      run: carried,
    });
    const version = { ...carried, functionId: runId, functionVersion: 3, code: undefined };
    expect(parseComputeJob({ runId, workspaceSlug: 'acme', run: version }).run).toEqual(version);
    // Neither a version nor code, both, or a bad field: claimed from its row instead.
    for (const run of [
      { ...carried, code: undefined },
      { ...carried, functionId: runId, functionVersion: 3 },
      { ...carried, limits: { wallMs: 'long' } },
      'run',
    ]) {
      expect(parseComputeJob({ runId, workspaceSlug: 'acme', run })).toEqual({ runId, workspaceSlug: 'acme' });
    }
  });

  it.each([
    [
      'a run id that is not a UUID (it would fail the claim of every job claimed with it)',
      { runId: 'abc', workspaceSlug: 'acme' },
    ],
    ['a workspace that is not a slug', { runId, workspaceSlug: 'Acme Inc' }],
    ['a missing field', { runId }],
    ['no object', 'job'],
    ['null', null],
  ])('refuses %s', (_case, payload) => {
    expect(() => parseComputeJob(payload)).toThrow('not a compute job');
  });
});

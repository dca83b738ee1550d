import { describe, expect, it } from '@jest/globals';
import { parseComputeJob } from './job-consumer.js';

describe('parseComputeJob', () => {
  const runId = '0b8e2f4c-5a1d-4c3e-9f7a-2d6b8c0e1f3a';

  it('takes a run id and a workspace slug', () => {
    expect(parseComputeJob({ runId, workspaceSlug: 'acme', extra: 1 })).toEqual({ runId, workspaceSlug: 'acme' });
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

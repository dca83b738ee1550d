import { randomUUID } from 'node:crypto';
import type { NewRun } from '../../src/runs/runs.repository.js';

/** An event-driven run as the record-event consumer makes it, fresh ids unless `overrides` name them. */
export function eventRun(overrides: Partial<NewRun> = {}): NewRun {
  return {
    id: randomUUID(),
    jobId: randomUUID(),
    functionId: randomUUID(),
    functionVersion: 1,
    functionCodeHash: 'a'.repeat(64),
    code: null,
    triggerId: randomUUID(),
    executionSource: 'trigger',
    sealedParams: 'sealed',
    paramsKeyVersion: 1,
    executionContext: { invocationDepth: 0 },
    limits: { wallMs: 1000 },
    createdBy: 'system:events',
    queuedAt: new Date(),
    ...overrides,
  };
}

import { describe, expect, it } from '@jest/globals';
import type { EventRecord, RecordEvent } from '@strata/contracts';
import { bodyOfEvent, testBody } from './delivery-body.js';

const record = (data: Record<string, unknown>, version = 1): EventRecord => ({
  id: '0b7c2b1e-0000-4000-8000-000000000001',
  workspaceSlug: 'acme',
  recordSlug: 'orders',
  data,
  status: 'active',
  version,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:00.000Z',
  createdBy: 'u1',
  updatedBy: 'u1',
});
const base = {
  workspaceSlug: 'acme',
  recordSlug: 'orders',
  recordId: '0b7c2b1e-0000-4000-8000-000000000001',
  timestamp: '2026-11-21T10:00:01.000Z',
};
const expectedData = (data: Record<string, unknown>) => ({
  id: '0b7c2b1e-0000-4000-8000-000000000001',
  recordSlug: 'orders',
  data,
});

describe('delivery body', () => {
  it('gives record_created the spec shape with createdBy', () => {
    expect(bodyOfEvent({ ...base, event: 'record_created', data: record({ total: 5 }), createdBy: 'u1' })).toEqual({
      ...base,
      event: 'record_created',
      data: expectedData({ total: 5 }),
      createdBy: 'u1',
    });
  });

  it('gives record_updated the record after the change, with updatedBy', () => {
    const event: RecordEvent = {
      ...base,
      event: 'record_updated',
      data: { before: record({ total: 5 }), after: record({ total: 7 }, 2) },
      updatedBy: 'u2',
    };
    expect(bodyOfEvent(event)).toEqual({
      ...base,
      event: 'record_updated',
      data: expectedData({ total: 7 }),
      updatedBy: 'u2',
    });
  });

  it('gives record_deleted the record as it was, with deletedBy', () => {
    const body = bodyOfEvent({ ...base, event: 'record_deleted', data: record({ total: 5 }), deletedBy: 'u3' });
    expect(body).toEqual({ ...base, event: 'record_deleted', data: expectedData({ total: 5 }), deletedBy: 'u3' });
  });

  it('passes records_bulk_created through as the aggregate, ids only', () => {
    const bulk: RecordEvent = {
      event: 'records_bulk_created',
      workspaceSlug: 'acme',
      recordSlug: 'orders',
      structureId: 'c0000000-0000-4000-8000-000000000000',
      recordIds: ['a', 'b'],
      count: 2,
      timestamp: base.timestamp,
      createdBy: 'u1',
      schemaDiscoveryMode: 'strict',
    };
    expect(bodyOfEvent(bulk)).toEqual(bulk);
  });

  it.each(['record_restored', 'record_reverted'] as const)('delivers nothing for %s', (name) => {
    const event: RecordEvent = {
      ...base,
      event: name,
      data: { before: record({}), after: record({}) },
      updatedBy: 'u1',
    };
    expect(bodyOfEvent(event)).toBeUndefined();
  });

  it('delivers nothing for expiries, bulk updates and failures', () => {
    expect(bodyOfEvent({ ...base, event: 'record_expired', data: record({}), deletedBy: 'system' })).toBeUndefined();
    expect(
      bodyOfEvent({
        event: 'records_bulk_updated',
        workspaceSlug: 'acme',
        recordSlug: 'orders',
        structureId: 'c',
        recordIds: [],
        count: 0,
        timestamp: base.timestamp,
      }),
    ).toBeUndefined();
    expect(
      bodyOfEvent({
        event: 'record_created_failed',
        workspaceSlug: 'acme',
        recordSlug: 'orders',
        error: { code: 'VALIDATION_ERROR', message: 'x' },
        timestamp: base.timestamp,
      }),
    ).toBeUndefined();
  });

  it('puts a test payload under data and flags it isTest', () => {
    const now = new Date('2026-11-21T10:00:00Z');
    expect(testBody('record_created', 'acme', { hello: 'world' }, now)).toEqual({
      event: 'record_created',
      workspaceSlug: 'acme',
      data: { hello: 'world' },
      timestamp: '2026-11-21T10:00:00.000Z',
      isTest: true,
    });
  });
});

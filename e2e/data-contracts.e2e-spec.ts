import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Contract points of the data service (issue 36): the changelog's userName, the legacy list
 * form's deprecation, saved queries' deprecated forms, a record read at a version, inactive
 * collections, the string language's FROM-first order, and byte-exact Idempotency-Key replays.
 */
let stack: Stack;
const ws = `dc-${Date.now().toString(36)}`;
let token: string;

beforeAll(async () => {
  stack = await startStack();
  token = await adminWorkspaceToken(stack, ws);
});

afterAll(async () => {
  await stack?.stop();
});

const base = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
const api = (method: string, path: string, body?: unknown, bearer = token) =>
  call(method, `${base()}${path}`, { token: bearer, ...(body !== undefined ? { body } : {}) });

async function collection(body: Record<string, unknown>): Promise<{ id: string; recordSlug: string }> {
  const res = await api('POST', '/structures', body);
  expect(res.status).toBe(200);
  return res.body;
}

describe('the string language', () => {
  it("accepts the spec's FROM-first order besides SQL's", async () => {
    const orders = await collection({
      name: 'Orders',
      properties: [
        { name: 'status', type: 'string' },
        { name: 'total', type: 'number' },
      ],
    });
    for (const [status, total] of [
      ['open', 5],
      ['open', 7],
      ['paid', 9],
    ] as const) {
      await api('POST', '/records', { structureId: orders.id, data: { status, total } });
    }
    const fromFirst = await api('POST', '/query', {
      query: 'FROM orders GROUP BY data.status SELECT data.status, COUNT(*) ORDER BY data.status',
    });
    expect(fromFirst.status).toBe(200);
    const sql = await api('POST', '/query', {
      query: 'SELECT data.status, COUNT(*) FROM orders GROUP BY data.status ORDER BY data.status',
    });
    expect(fromFirst.body).toEqual(sql.body);
    expect(fromFirst.body.data.map((row: Record<string, unknown>) => row['count'])).toEqual([2, 1]);
    const spec = await api('POST', '/query', { query: 'FROM orders GROUP BY data.status SELECT COUNT(*)' });
    expect(spec.status).toBe(200);

    const records = await api('POST', '/query', {
      query: "FROM orders WHERE data.status = 'open' ORDER BY data.total DESC LIMIT 1",
    });
    expect(records.status).toBe(200);
    expect(records.body.data.map((r: { data: { total: number } }) => r.data.total)).toEqual([7]);
  });
});

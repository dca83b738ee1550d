import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Transport } from '../http/transport.js';
import { Records } from './records.js';

/** Answers POST /records/query with the pages given, in order. */
let server: Server;
let pages: unknown[] = [];
let records: Records;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(pages.shift() ?? { data: [], meta: { hasMore: false } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  records = new Records(new Transport(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), '/base');
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('records.iterateQuery', () => {
  it('follows nextCursor to the last page', async () => {
    pages = [
      { data: [{ id: 'a' }], meta: { hasMore: true, nextCursor: 'c1' } },
      { data: [{ id: 'b' }], meta: { hasMore: false, nextCursor: null } },
    ];
    const ids: string[] = [];
    for await (const row of records.iterateQuery<{ id: string }>({ resource: 'r', page: { limit: 1 } }))
      ids.push(row.id);
    expect(ids).toEqual(['a', 'b']);
  });

  it('throws, rather than stop short, when a page says more rows follow but carries no cursor (joins)', async () => {
    pages = [{ data: [{ id: 'a' }], meta: { hasMore: true, nextCursor: null } }];
    const ids: string[] = [];
    await expect(async () => {
      for await (const row of records.iterateQuery<{ id: string }>({ resource: 'r', joins: [] })) ids.push(row.id);
    }).rejects.toThrow('records.iterateQuery: the answer has more rows but no cursor');
    expect(ids).toEqual(['a']);
  });
});

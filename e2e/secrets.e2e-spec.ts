import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { KeyRing } from '@strata/crypto';
import { DEVELOPMENT_ENCRYPTION_KEYS } from '@strata/platform';
import { eventually } from '@strata/testing';
import {
  adminWorkspaceToken,
  call,
  EventCollector,
  serviceAccountToken,
  startStack,
  type Stack,
} from '@strata/testkit';
import { Receivers } from './support/webhook-receiver.js';
import {
  WEBHOOK_TEST_SETTINGS,
  createSubscription,
  settled,
  workspaceApi,
  type WorkspaceApi,
} from './support/webhooks.js';

/**
 * Secrets never leak: every read path, with one caller holding secrets:reveal and
 * one without; every event and webhook body; and what is stored besides the
 * sealed fields (changelog, changes of versions, stored upsert responses).
 */

let stack: Stack;
let events: EventCollector;
let db: pg.Client;
let admin: WorkspaceApi;
/** A caller of the workspace's data API, with extra headers when given. */
type Caller = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => ReturnType<typeof call>;
/** records:* and secrets:reveal. */
let revealer: Caller;
/** records:* without secrets:reveal. */
let reader: Caller;
const receivers = new Receivers();
const ws = `secrets-${Date.now().toString(36)}`;

/** Every plaintext secret these tests write matches this; nothing else does. */
const PLAIN = /PLAIN-|8642097531/;
const ENVELOPE = /sv1\.\d+\./;
const MASK = '********';

let vault: { id: string; recordSlug: string };
let holders: { id: string; recordSlug: string };

/** Secrets at the top level, inside an object, inside each object of an array; a computed field over one. */
const VAULT_PROPERTIES = [
  { name: 'name', type: 'string' },
  { name: 'apiKey', type: 'string', isSecret: true },
  { name: 'pin', type: 'string', isSecret: true },
  {
    name: 'creds',
    type: 'object',
    properties: [
      { name: 'user', type: 'string' },
      { name: 'token', type: 'string', isSecret: true },
    ],
  },
  {
    name: 'contacts',
    type: 'array',
    items: { type: 'object' },
    itemSchema: [
      { name: 'label', type: 'string' },
      { name: 'phone', type: 'string', isSecret: true, nullable: true },
    ],
  },
  // Would show the pin to anyone if expressions could read secrets.
  { name: 'pinNumber', type: 'number', expression: '$number(pin)', computedMode: 'virtual' },
  { name: 'pinStored', type: 'number', expression: '$number(pin)' },
];

const secretData = (n: string) => ({
  name: `vault ${n}`,
  apiKey: `PLAIN-api-${n}`,
  pin: '8642097531',
  creds: { user: `user ${n}`, token: `PLAIN-token-${n}` },
  contacts: [
    { label: 'home', phone: `PLAIN-phone-${n}` },
    { label: 'none', phone: null },
  ],
});

const masked = (n: string) => ({
  name: `vault ${n}`,
  apiKey: MASK,
  pin: MASK,
  creds: { user: `user ${n}`, token: MASK },
  contacts: [
    { label: 'home', phone: MASK },
    { label: 'none', phone: null },
  ],
});

/** Neither a plaintext secret nor an envelope anywhere in `value`. */
function hidden(value: unknown): void {
  const text = JSON.stringify(value);
  expect(text).not.toMatch(PLAIN);
  expect(text).not.toMatch(ENVELOPE);
}

/** The revealer sees `data` exactly (and no computed value derived from a secret). */
function revealed(data: Record<string, unknown>, n: string): void {
  expect(data).toEqual(secretData(n));
}

beforeAll(async () => {
  stack = await startStack({ ...WEBHOOK_TEST_SETTINGS, DATA_TTL_SWEEP_INTERVAL_MS: '200' });
  const adminToken = await adminWorkspaceToken(stack, ws);
  admin = workspaceApi(stack, ws, adminToken);
  const records = { resource: 'records', actions: ['create', 'retrieve', 'list', 'update', 'delete'] };
  const caller =
    (token: string): Caller =>
    (method, path, body, headers) =>
      call(method, `${stack.baseUrl}/data/workspace/${ws}/api/v1${path}`, {
        token,
        ...(body !== undefined ? { body } : {}),
        ...(headers ? { headers } : {}),
      });
  revealer = caller(
    await serviceAccountToken(stack, ws, adminToken, {
      name: 'revealer',
      ...records,
      morePolicies: [{ resource: 'secrets', actions: ['reveal'] }],
    }),
  );
  reader = caller(await serviceAccountToken(stack, ws, adminToken, { name: 'reader', ...records }));
  events = await EventCollector.start(stack.natsPrefix, 'secrets');
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  const v = await admin('POST', '/structures', { name: 'Vault', enableVersioning: true, properties: VAULT_PROPERTIES });
  expect(v.status).toBe(200);
  vault = v.body;
  const h = await admin('POST', '/structures', {
    name: 'Holders',
    properties: [
      { name: 'title', type: 'string' },
      {
        name: 'vault',
        type: 'reference',
        target: vault.recordSlug,
        relationship: 'many-to-one',
        onDelete: 'set_null',
        nullable: true,
      },
    ],
  });
  expect(h.status).toBe(200);
  holders = h.body;
});

afterAll(async () => {
  await events?.stop();
  await db?.end();
  await stack?.stop();
  await receivers.stopAll();
});

async function create(as: Caller, n: string, extra: Record<string, unknown> = {}) {
  const res = await as('POST', '/records', { structureId: vault.id, data: secretData(n), ...extra });
  expect(res.status).toBe(201);
  return res.body as { id: string; data: Record<string, unknown> };
}

describe('secret fields in the record read paths', () => {
  it('are masked in create, get, list and slug list without secrets:reveal, and shown with it', async () => {
    const made = await reader('POST', '/records', { structureId: vault.id, data: secretData('a') });
    expect(made.status).toBe(201);
    expect(made.body.data).toEqual(masked('a'));
    hidden(made.body);
    const id = made.body.id as string;

    const mine = await create(revealer, 'b');
    revealed(mine.data, 'b');

    for (const path of [
      `/records/${id}`,
      `/records?structureId=${vault.id}&limit=100`,
      `/records/slug/${vault.recordSlug}?limit=100`,
    ]) {
      const asReader = await reader('GET', path);
      expect(asReader.status).toBe(200);
      hidden(asReader.body);
      const asRevealer = await revealer('GET', path);
      expect(asRevealer.status).toBe(200);
      expect(JSON.stringify(asRevealer.body)).toContain('PLAIN-api-a');
      expect(JSON.stringify(asRevealer.body)).not.toMatch(ENVELOPE);
    }
    expect((await reader('GET', `/records/${id}`)).body.data).toEqual(masked('a'));
    revealed((await revealer('GET', `/records/${id}`)).body.data, 'a');
  });

  it('are masked in versions, history (data and changes), changelog and restore responses', async () => {
    const { id } = await create(revealer, 'c');
    const patched = await reader('PATCH', `/records/${id}`, {
      data: { apiKey: 'PLAIN-api-c2', creds: { user: 'user c', token: 'PLAIN-token-c2' } },
    });
    expect(patched.status).toBe(200);
    hidden(patched.body);
    const replaced = await reader('PUT', `/records/${id}`, { data: secretData('c3') });
    expect(replaced.status).toBe(200);
    hidden(replaced.body);

    for (const path of [
      `/records/${id}?version=1`,
      `/records/${id}?includeHistory=true&includeChangelog=true`,
      `/records/${id}/history`,
      `/records/${id}/changelog`,
    ]) {
      const res = await reader('GET', path);
      expect(res.status).toBe(200);
      hidden(res.body);
    }
    const history = (await reader('GET', `/records/${id}/history`)).body.versions;
    expect(history[1].changes).toMatchObject({
      apiKey: { old: MASK, new: MASK },
      creds: { old: { user: 'user c', token: MASK }, new: { user: 'user c', token: MASK } },
    });
    expect(history[0].data).toEqual(masked('c'));
    const changelog = (await reader('GET', `/records/${id}/changelog`)).body.entries;
    expect(changelog[1].changes.apiKey).toEqual({ field: 'apiKey', oldValue: MASK, newValue: MASK });

    // The revealer reads every version's secrets; changes stay masked for everyone (they are stored masked).
    const asRevealer = await revealer('GET', `/records/${id}?version=1&includeHistory=true`);
    revealed(asRevealer.body.data, 'c');
    expect(asRevealer.body.history[1].data.apiKey).toBe('PLAIN-api-c2');
    hidden(asRevealer.body.history.map((v: { changes: unknown }) => v.changes));

    const restored = await reader('POST', `/records/${id}/restore`, { version: 1 });
    expect(restored.status).toBe(200);
    expect(restored.body.data).toEqual(masked('c'));
    hidden(restored.body);
    const again = await revealer('POST', `/records/${id}/restore`, { version: 2 });
    expect(again.body.data.creds.token).toBe('PLAIN-token-c2');
  });

  it('are masked inside expanded references', async () => {
    const target = await create(revealer, 'd');
    const holder = await reader('POST', '/records', {
      structureId: holders.id,
      data: { title: 'h', vault: target.id },
    });
    expect(holder.status).toBe(201);
    for (const path of [`/records/${holder.body.id}?expand=vault`, `/records?structureId=${holders.id}&expand=vault`]) {
      const res = await reader('GET', path);
      expect(res.status).toBe(200);
      hidden(res.body);
      const shown = await revealer('GET', path);
      expect(JSON.stringify(shown.body)).toContain('PLAIN-token-d');
    }
    const one = await reader('GET', `/records/${holder.body.id}?expand=vault`);
    expect(one.body.data._expanded.vault).toEqual({ id: target.id, data: masked('d') });
  });

  it('are masked in upsert and bulk responses, and a repeated Idempotency-Key never replays a secret', async () => {
    const key = `upsert-${Date.now()}`;
    const body = { match: { name: 'vault e' }, data: secretData('e') };
    const first = await revealer('POST', `/records/slug/${vault.recordSlug}/upsert`, body);
    expect(first.status).toBe(201);
    revealed(first.body.data.data, 'e');
    const upserted = await reader('POST', `/records/slug/${vault.recordSlug}/upsert`, {
      match: { name: 'vault e' },
      data: { apiKey: 'PLAIN-api-e2' },
    });
    expect(upserted.status).toBe(200);
    hidden(upserted.body);

    const keyed = { match: { name: 'vault f' }, data: secretData('f') };
    const asRevealer = await revealer('POST', `/records/slug/${vault.recordSlug}/upsert`, keyed, {
      'Idempotency-Key': key,
    });
    expect(asRevealer.status).toBe(201);
    // With a key the first answer is the stored one, masked even for a revealer, so that a
    // repeat is the same bytes (docs/data.md, Upsert); the revealer reads the record for them.
    hidden(asRevealer.body);
    // The same key and request from a caller without secrets:reveal: the stored answer, masked.
    const replayed = await reader('POST', `/records/slug/${vault.recordSlug}/upsert`, keyed, {
      'Idempotency-Key': key,
    });
    expect(replayed.status).toBe(201);
    expect(replayed.body).toEqual(asRevealer.body);
    hidden(replayed.body);
    revealed((await revealer('GET', `/records/${asRevealer.body.data.id}`)).body.data, 'f');

    const bulk = await reader('POST', '/records/bulk', {
      structureId: vault.id,
      records: [{ data: secretData('g') }, { data: secretData('h') }],
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.created).toBe(2);
    hidden(bulk.body);
    const batch = await reader('POST', '/records/batch', {
      structureId: vault.id,
      records: [{ data: secretData('i') }],
    });
    expect(batch.body.records[0].data).toEqual(masked('i'));
    hidden(batch.body);
    const updates = await reader('PATCH', '/records/bulk', {
      updates: [{ id: bulk.body.records[0].id, data: { apiKey: 'PLAIN-api-g2' } }],
    });
    expect(updates.body.updated).toBe(1);
    hidden(updates.body);
    const asRevealerBulk = await revealer('POST', '/records/bulk', {
      structureId: vault.id,
      records: [{ data: secretData('j') }],
    });
    revealed(asRevealerBulk.body.records[0].data, 'j');
  });

  it('are kept when a caller without secrets:reveal writes back the mask it read', async () => {
    const made = await create(revealer, 'r');
    const id = made.id;
    const read = (await reader('GET', `/records/${id}`)).body.data as Record<string, unknown>;
    expect(read['apiKey']).toBe(MASK);
    // A read-modify-write round trip: the whole record back (PUT), then a PATCH naming the secret.
    const { pinNumber: _virtual, ...writable } = read;
    const put = await reader('PUT', `/records/${id}`, { data: { ...writable, name: 'vault r2' } });
    expect(put.status).toBe(200);
    const patch = await reader('PATCH', `/records/${id}`, { data: { apiKey: MASK, name: 'vault r' } });
    expect(patch.status).toBe(200);
    revealed((await revealer('GET', `/records/${id}`)).body.data, 'r');
  });

  it('never reach computed fields, which see a secret as absent', async () => {
    const { id } = await create(revealer, 'k');
    const shown = (await revealer('GET', `/records/${id}`)).body.data;
    expect(shown.pin).toBe('8642097531');
    expect(shown).not.toHaveProperty('pinNumber');
    expect(shown).not.toHaveProperty('pinStored');
  });
});

describe('secrets at rest', () => {
  it('are sealed in records and versions, and masked in changes, changelog and stored upsert responses', async () => {
    const { id } = await create(reader, 'm');
    expect((await reader('PATCH', `/records/${id}`, { data: { apiKey: 'PLAIN-api-m2' } })).status).toBe(200);
    const upserted = await revealer(
      'POST',
      `/records/slug/${vault.recordSlug}/upsert`,
      { match: { name: 'vault n' }, data: secretData('n') },
      { 'Idempotency-Key': `rest-${Date.now()}` },
    );
    expect(upserted.status).toBe(201);
    const rows = await db.query<{ t: string }>(`
      SELECT data::text AS t FROM data.records
      UNION ALL SELECT data::text || changes::text FROM data.record_versions
      UNION ALL SELECT changes::text FROM data.record_changelog
      UNION ALL SELECT response::text FROM data.idempotency_keys
      UNION ALL SELECT coalesce(sample, '') FROM data.schema_suggestions`);
    expect(rows.rows.length).toBeGreaterThan(0);
    for (const row of rows.rows) expect(row.t).not.toMatch(PLAIN);
    // The fingerprint of a request that carried secrets is keyed: a plain hash of the pin is guessed offline.
    const fingerprints = await db.query<{ request_hash: string }>('SELECT request_hash FROM data.idempotency_keys');
    for (const row of fingerprints.rows) expect(row.request_hash).toMatch(/^m1\.[A-Za-z0-9_-]{43}$/);
    const [stored] = (await db.query('SELECT data FROM data.records WHERE id = $1', [id])).rows;
    expect(stored.data.creds.token).toMatch(/^sv1\.1\./);
    expect(stored.data.contacts[0].phone).toMatch(/^sv1\.1\./);
    expect(stored.data.contacts[1].phone).toBeNull();
  });

  it('are bound to their record: an envelope copied into another record does not open there', async () => {
    const a = await create(revealer, 'p');
    const b = await create(revealer, 'q');
    const [row] = (await db.query('SELECT data FROM data.records WHERE id = $1', [a.id])).rows;
    await db.query(
      `UPDATE data.records SET data = jsonb_set(jsonb_set(data, '{apiKey}', $2), '{creds,token}', $3) WHERE id = $1`,
      [b.id, JSON.stringify(row.data.apiKey), JSON.stringify(row.data.creds.token)],
    );
    const res = await revealer('GET', `/records/${b.id}`);
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain('PLAIN-api-p');
    // Without secrets:reveal nothing is decrypted: the mask, as always.
    expect((await reader('GET', `/records/${b.id}`)).body.data).toEqual(masked('q'));
  });

  it('still reads envelopes sealed before record binding (collection and field only)', async () => {
    const { id } = await create(revealer, 'r');
    const legacy = KeyRing.parse(DEVELOPMENT_ENCRYPTION_KEYS).encrypt('PLAIN-legacy', `${vault.id}:apiKey`);
    await db.query(`UPDATE data.records SET data = jsonb_set(data, '{apiKey}', $2) WHERE id = $1`, [
      id,
      JSON.stringify(legacy),
    ]);
    expect((await revealer('GET', `/records/${id}`)).body.data.apiKey).toBe('PLAIN-legacy');
    expect((await reader('GET', `/records/${id}`)).body.data.apiKey).toBe(MASK);
  });
});

describe('secrets in record events and webhook bodies', () => {
  it('are masked in every record event, failures included, and in every webhook body', async () => {
    const hook = await receivers.start();
    const sub = await createSubscription(admin, {
      url: hook.url('/vault'),
      events: ['record_created', 'record_updated', 'record_deleted', 'records_bulk_created'],
      recordSlugs: [vault.recordSlug],
    });
    hook.trust('current', sub.secret);
    const started = events.seen.length;

    const { id } = await create(revealer, 's');
    expect((await revealer('PATCH', `/records/${id}`, { data: { apiKey: 'PLAIN-api-s2' } })).status).toBe(200);
    expect((await revealer('POST', `/records/${id}/restore`, { version: 1 })).status).toBe(200); // reverted
    expect((await revealer('DELETE', `/records/${id}`)).status).toBeLessThan(300);
    expect((await revealer('POST', `/records/${id}/restore`, { version: 2 })).status).toBe(200); // restored
    await create(revealer, 't', { ttlSeconds: 1 }); // expired by the sweeper
    await revealer('POST', '/records/bulk', { structureId: vault.id, records: [{ data: secretData('u') }] });
    // Refused writes that carried secrets.
    expect(
      (await revealer('POST', '/records', { structureId: vault.id, data: { ...secretData('v'), nope: 1 } })).status,
    ).toBe(400);
    expect((await revealer('PATCH', `/records/${id}`, { data: { apiKey: 42 } })).status).toBe(400);

    const names = [
      'record_created',
      'record_updated',
      'record_reverted',
      'record_deleted',
      'record_restored',
      'record_expired',
      'records_bulk_created',
      'record_created_failed',
      'record_updated_failed',
    ];
    const seen = await eventually(() => {
      const mine = events.seen.slice(started).filter((e) => e.payload.recordSlug === vault.recordSlug);
      return names.every((n) => mine.some((e) => e.payload.event === n)) ? mine : undefined;
    }, 20_000);
    for (const e of seen) hidden(e.payload);
    const created = seen.find(
      (e) => e.payload.event === 'record_created' && 'recordId' in e.payload && e.payload.recordId === id,
    )!;
    expect((created.payload as unknown as { data: { data: unknown } }).data.data).toMatchObject({
      apiKey: MASK,
      creds: { token: MASK },
      contacts: [{ phone: MASK }, { phone: null }],
    });

    await settled(stack, admin, sub.id);
    const arrivals = await hook.waitFor(() => true, 4);
    for (const a of arrivals) {
      expect(a.verifiedBy).toEqual(['current']);
      expect(a.rawBody).not.toMatch(PLAIN);
      expect(a.rawBody).not.toMatch(ENVELOPE);
    }
    expect(arrivals.map((a) => a.body['event'])).toEqual(
      expect.arrayContaining(['record_created', 'record_updated', 'record_deleted', 'records_bulk_created']),
    );
    const deliveries = await admin('GET', `/webhook-subscriptions/${sub.id}/deliveries?limit=100`);
    for (const d of deliveries.body.data) {
      const one = await admin('GET', `/webhook-subscriptions/${sub.id}/deliveries/${d.id}`);
      hidden(one.body.requestPayload);
    }
  });
});

describe('a collection change that moves a secret', () => {
  const plainCode = [{ name: 'code', type: 'string' }];
  const secretCode = [{ name: 'code', type: 'string', isSecret: true }];

  it('seals the values of a field made secret, in records, versions, changes and changelog', async () => {
    const c = await admin('POST', '/structures', { name: 'Flip On', enableVersioning: true, properties: plainCode });
    const made = await reader('POST', '/records', { structureId: c.body.id, data: { code: 'PLAIN-code-1' } });
    await reader('PATCH', `/records/${made.body.id}`, { data: { code: 'PLAIN-code-2' } });
    expect((await admin('PUT', `/structures/${c.body.id}`, { properties: secretCode })).status).toBe(200);

    for (const path of [
      `/records/${made.body.id}?includeHistory=true&includeChangelog=true`,
      `/records/${made.body.id}/changelog`,
    ]) {
      hidden((await reader('GET', path)).body);
    }
    const shown = await revealer('GET', `/records/${made.body.id}?version=1`);
    expect(shown.body.data.code).toBe('PLAIN-code-1');
    const rows = await db.query<{ t: string }>(
      `SELECT data::text AS t FROM data.records WHERE id = $1
       UNION ALL SELECT data::text || changes::text FROM data.record_versions WHERE record_id = $1
       UNION ALL SELECT changes::text FROM data.record_changelog WHERE record_id = $1`,
      [made.body.id],
    );
    for (const row of rows.rows) expect(row.t).not.toMatch(PLAIN);
  });

  it('opens the values of a secret made plain, and masks for everyone the envelopes a removed secret left', async () => {
    const c = await admin('POST', '/structures', {
      name: 'Flip Off',
      enableVersioning: true,
      properties: [...secretCode, { name: 'gone', type: 'string', isSecret: true }],
    });
    const made = await reader('POST', '/records', {
      structureId: c.body.id,
      data: { code: 'PLAIN-code-3', gone: 'PLAIN-gone' },
    });
    // The removed field's envelope stays in the record, under its old name (now an unknown field).
    const changed = await admin('PUT', `/structures/${c.body.id}`, {
      properties: plainCode,
      schemaDiscoveryMode: 'auto-evolving',
    });
    expect(changed.status).toBe(200);
    for (const as of [reader, revealer]) {
      const res = await as('GET', `/records/${made.body.id}?includeHistory=true`);
      expect(res.body.data).toEqual({ code: 'PLAIN-code-3', gone: MASK });
      expect(JSON.stringify(res.body)).not.toMatch(ENVELOPE);
      expect(JSON.stringify(res.body)).not.toContain('PLAIN-gone');
    }
    // A write of the record shows discovery the unknown field: it samples the mask, not the envelope.
    expect((await reader('PATCH', `/records/${made.body.id}`, { data: { code: 'x' } })).status).toBe(200);
    const suggestions = await admin('GET', `/structures/${c.body.recordSlug}/schema-suggestions`);
    expect(suggestions.body).toEqual(expect.anything());
    expect(JSON.stringify(suggestions.body)).toContain('gone');
    hidden(suggestions.body);
  });
});

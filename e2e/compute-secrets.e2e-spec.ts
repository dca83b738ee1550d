import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Trigger secrets stay write-only (docs/compute.md, "Encrypted parameters"): a
 * trigger's signing secret cannot be turned into a parameter the function
 * receives, parameter names starting with `#` are refused, and what a function
 * logs or returns of its encrypted parameters is masked where the run is stored.
 */

let stack: Stack;
let db: pg.Client;
let token: string;
let revealId: string;
const ws = `csec-${Date.now().toString(36)}`;
const base = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
const MASK = '********';

/** Tells what the function received without returning it as it is (a stored result masks it). */
const REVEAL = `async function run() {
  const reversed = {};
  for (const [name, value] of Object.entries(triggerParams)) {
    reversed[name] = JSON.stringify(value).split('').reverse().join('');
  }
  return { success: true, data: { names: Object.keys(triggerParams), reversed } };
}`;

const reverse = (text: string) => text.split('').reverse().join('');

async function finished(jobId: string): Promise<Record<string, any>> {
  return eventually(
    async () => {
      const listed = await call('GET', `${base()}/function-runs?jobId=${jobId}`, { token });
      const r = listed.body.runs?.[0];
      if (!r || ['queued', 'running'].includes(r.status)) return undefined;
      return (await call('GET', `${base()}/function-runs/${r.id}`, { token })).body as Record<string, any>;
    },
    45_000,
    50,
  );
}

/** The run of a signed arrival at an http trigger's path (GitHub-style plain HMAC in x-signature). */
async function arrive(path: string, secret: string, n: number): Promise<Record<string, any>> {
  const body = JSON.stringify({ n });
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const sent = await call('POST', `${base()}/http-trigger/${path}`, {
    body,
    headers: { 'content-type': 'application/json', 'x-signature': signature },
  });
  expect(sent.status).toBe(202);
  return finished(sent.body.executionId);
}

beforeAll(async () => {
  stack = await startStack();
  await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  token = await adminWorkspaceToken(stack, ws);
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  const fn = await call('POST', `${base()}/compute-functions`, { token, body: { name: 'reveal', code: REVEAL } });
  expect(fn.status).toBe(201);
  revealId = fn.body.id;
});

afterAll(async () => {
  await db?.end();
  await stack?.stop();
});

describe("a trigger's signing secret", () => {
  it('pasted into a parameter named #signingSecret is refused, and never reaches the function', async () => {
    const SECRET = 'whsec-paste-PLAIN-7f3a9c';
    const created = await call('POST', `${base()}/function-triggers`, {
      token,
      body: {
        name: 'pasted',
        functionId: revealId,
        executionType: 'http-trigger',
        triggerMetadata: { path: 'pasted', validateSignature: true, signingSecret: SECRET, params: { region: 'eu' } },
      },
    });
    expect(created.status).toBe(201);
    const got = await call('GET', `${base()}/function-triggers/${created.body.id}`, { token });
    const envelope = got.body.triggerMetadata.signingSecret;
    expect(envelope).toMatchObject({ encrypted: true, value: expect.stringMatching(/^sv1\./) });

    const pasted = await call('PUT', `${base()}/function-triggers/${created.body.id}`, {
      token,
      body: { triggerMetadata: { ...got.body.triggerMetadata, params: { region: 'eu', '#signingSecret': envelope } } },
    });
    expect(pasted.status).toBe(400);
    expect(pasted.body).toMatchObject({
      error: expect.any(String),
      statusCode: 400,
      details: [{ field: 'triggerMetadata.params["#signingSecret"]', message: expect.stringContaining('#') }],
    });
    expect(pasted.body.details).toHaveLength(1);
    // Under any other name it does not open either: it is the signing secret's, not a parameter's.
    const renamed = await call('PUT', `${base()}/function-triggers/${created.body.id}`, {
      token,
      body: { triggerMetadata: { ...got.body.triggerMetadata, params: { region: 'eu', stolen: envelope } } },
    });
    expect(renamed).toMatchObject({ status: 400, body: { details: [{ field: 'triggerMetadata.params.stolen' }] } });

    const run = await arrive('pasted', SECRET, 1);
    expect(run.status).toBe('succeeded');
    expect(run.result.data.names).toEqual(['region']);
    const everything = JSON.stringify(run);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(reverse(SECRET));
  });

  it('pasted into a draft parameter named #signingSecret is refused, and the published trigger never hands it over', async () => {
    const SECRET = 'whsec-draft-PLAIN-51c2e8';
    const draft = await call('POST', `${base()}/drafts`, {
      token,
      body: {
        resourceType: 'function-triggers',
        data: {
          name: 'drafted-hook',
          functionId: revealId,
          executionType: 'http-trigger',
          triggerMetadata: { path: 'drafted-hook', validateSignature: true, signingSecret: SECRET },
        },
      },
    });
    expect(draft.status).toBe(201);
    const envelope = draft.body.data.triggerMetadata.signingSecret;
    const pasted = await call('PUT', `${base()}/drafts/${draft.body.id}`, {
      token,
      body: {
        data: {
          ...draft.body.data,
          triggerMetadata: { ...draft.body.data.triggerMetadata, params: { '#signingSecret': envelope } },
        },
      },
    });
    expect(pasted.status).toBe(400);
    expect(pasted.body.details).toEqual([
      { field: 'data.triggerMetadata.params.#signingSecret', message: expect.stringContaining('#') },
    ]);

    const published = await call('POST', `${base()}/function-triggers/${draft.body.id}/publish`, { token });
    expect(published.status).toBe(201);
    const run = await arrive('drafted-hook', SECRET, 2);
    expect(run.status).toBe('succeeded');
    expect(run.result.data.names).toEqual([]);
    const everything = JSON.stringify(run);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(reverse(SECRET));
  });
});

describe('parameter names', () => {
  it('starting with # are refused by triggers and drafts, one details entry per name', async () => {
    const params = { '#a': 1, '#b': { value: 'x', encrypt: true }, ok: 1, 'a#': 2 };
    const created = await call('POST', `${base()}/function-triggers`, {
      token,
      body: { name: 'hashed', functionId: revealId, triggerMetadata: { params } },
    });
    expect(created.status).toBe(400);
    expect(created.body.details).toEqual([
      { field: 'triggerMetadata.params["#a"]', message: expect.stringContaining('must not start with #') },
      { field: 'triggerMetadata.params["#b"]', message: expect.stringContaining('must not start with #') },
    ]);
    const endpointFn = await call('POST', `${base()}/compute-functions`, {
      token,
      body: { name: 'endpoint-code', code: 'export default async () => 1;' },
    });
    expect(endpointFn.status).toBe(201);
    const endpoint = await call('POST', `${base()}/function-triggers`, {
      token,
      body: {
        name: 'hashed-endpoint',
        functionId: endpointFn.body.id,
        executionType: 'endpoint',
        triggerMetadata: { path: 'hashed', params: { '#token': 't' } },
      },
    });
    expect(endpoint.status).toBe(400);
    expect(endpoint.body.details).toEqual([
      { field: 'triggerMetadata.params["#token"]', message: expect.stringContaining('must not start with #') },
    ]);

    const draft = await call('POST', `${base()}/drafts`, {
      token,
      body: { resourceType: 'function-triggers', data: { triggerMetadata: { params } } },
    });
    expect(draft.status).toBe(400);
    expect(draft.body.details.map((d: { field: string }) => d.field)).toEqual([
      'data.triggerMetadata.params.#a',
      'data.triggerMetadata.params.#b',
    ]);
  });
});

describe('masking', () => {
  it("masks the function's encrypted parameters in the logs and result it stores, embedded ones too", async () => {
    const KEY = 'sk-mask-PLAIN-90817';
    const code = `async function run() {
      api.log('key is ' + triggerParams.apiKey);
      api.log(triggerParams.pin);
      api.log({ nested: triggerParams.apiKey, pin: triggerParams.pin });
      api.log('about tab');
      return {
        success: true,
        data: {
          key: triggerParams.apiKey,
          pin: triggerParams.pin,
          region: triggerParams.region,
          embedded: 'x' + triggerParams.apiKey + 'y',
          length: triggerParams.apiKey.length,
        },
      };
    }`;
    const fn = await call('POST', `${base()}/compute-functions`, { token, body: { name: 'leaky', code } });
    expect(fn.status).toBe(201);
    const trigger = await call('POST', `${base()}/function-triggers`, {
      token,
      body: {
        name: 'leaky',
        functionId: fn.body.id,
        triggerMetadata: {
          params: { apiKey: { value: KEY, encrypt: true }, pin: { value: 'ab', encrypt: true }, region: 'eu' },
        },
      },
    });
    expect(trigger.status).toBe(201);
    const executed = await call('POST', `${base()}/function-triggers/${trigger.body.id}/execute`, { token });
    const run = await finished(executed.body);
    expect(run.status).toBe('succeeded');
    // The function had the plain values (their length), the stored result does not.
    expect(run.result.data).toEqual({ key: MASK, pin: MASK, region: 'eu', embedded: `x${MASK}y`, length: KEY.length });
    // A short secret is masked where a whole value is it, not inside other text.
    expect(run.logs.map((l: { message: string }) => l.message)).toEqual([
      `key is ${MASK}`,
      MASK,
      `{"nested":"${MASK}","pin":"ab"}`,
      'about tab',
    ]);
    const stored = await db.query<{ logs: string; return_value: string }>(
      'SELECT logs::text AS logs, return_value::text AS return_value FROM compute.runs WHERE id = $1',
      [run.id],
    );
    expect(stored.rows[0]!.logs + stored.rows[0]!.return_value).not.toContain(KEY);

    // A re-run masks the trigger's parameters too, and so does a failure's message.
    const thrower = await call('PUT', `${base()}/compute-functions/${fn.body.id}`, {
      token,
      body: { code: 'async function run() { throw new Error("bad key " + triggerParams.apiKey); }' },
    });
    expect(thrower.status).toBe(200);
    const rerun = await call('POST', `${base()}/function-runs/${run.id}/rerun`, {
      token,
      body: { useLatestCode: true },
    });
    expect(rerun.status).toBe(200);
    const failed = await finished(rerun.body.jobId);
    expect(failed.status).toBe('failed');
    expect(failed.error.message).toContain(`bad key ${MASK}`);
    expect(JSON.stringify(failed)).not.toContain(KEY);
  });
});

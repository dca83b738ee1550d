import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * A hostile sweep of every documented route of every running service, as an
 * outsider would run one: the routes come from the services' own OpenAPI
 * documents (served through the gateway at /docs/<service>.json), and each is
 * called with malformed path parameters, query parameters and bodies. No
 * answer may be a 5xx or take longer than the client's deadline, and no answer
 * may carry a stored secret envelope (`sv1.`).
 *
 * It is a regression net, not a specification: the expected statuses of each
 * form are asserted by the feature tests; here only "never a server error".
 */
let stack: Stack;
const ws = `sweep-${Date.now().toString(36)}`;
let token: string;
const seeded = new Map<string, string>();

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly pathParams: string[];
  readonly queryParams: { name: string; type: string | undefined }[];
  readonly bodyFields: { name: string; type: string | undefined }[];
  readonly hasBody: boolean;
}

interface OpenApiParameter {
  name: string;
  in: string;
  schema?: { type?: string };
}
interface OpenApiSchema {
  $ref?: string;
  type?: string;
  properties?: Record<string, OpenApiSchema>;
}
interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: OpenApiParameter[];
        requestBody?: { content?: Record<string, { schema?: OpenApiSchema }> };
      }
    >
  >;
  components?: { schemas?: Record<string, OpenApiSchema> };
}

async function operationsOf(service: string): Promise<Operation[]> {
  const res = await call('GET', `${stack.baseUrl}/docs/${service}.json`);
  expect(res.status).toBe(200);
  const doc = res.body as OpenApiDocument;
  const schemas = doc.components?.schemas ?? {};
  const resolve = (s: OpenApiSchema | undefined): OpenApiSchema | undefined =>
    s?.$ref ? schemas[s.$ref.split('/').at(-1)!] : s;
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const parameters = op.parameters ?? [];
      const body = resolve(op.requestBody?.content?.['application/json']?.schema);
      out.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, type: p.schema?.type })),
        bodyFields: Object.entries(body?.properties ?? {}).map(([name, s]) => ({ name, type: resolve(s)?.type })),
        hasBody: ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method.toUpperCase()),
      });
    }
  }
  return out;
}

/** Where a service's routes are reached: the data and webhooks routes through the gateway, IAM on the auth service. */
function urlOf(path: string): string {
  return path.startsWith('/workspace/') && !path.startsWith('/workspace/api/')
    ? `${stack.authUrl}${path}`
    : `${stack.baseUrl}${path}`;
}

/** A path parameter's usual value: the seeded resource of that name when there is one. */
function valueOf(param: string): string {
  if (param === 'workspace' || param === 'workspaceSlug') return ws;
  return seeded.get(param) ?? '00000000-0000-4000-8000-000000000000';
}

function fill(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? encodeURIComponent(valueOf(name)));
}

const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** Raw bodies sent as application/json to every route that takes a body. */
const RAW_BODIES: [string, Buffer | string][] = [
  ['deep object', deep(20_000)],
  ['deep array', deepArray(20_000)],
  ['lone surrogate', '{"name":"a\\ud800b","data":{"x":"\\udfff"}}'],
  ['NUL', '{"name":"a\\u0000b"}'],
  ['invalid UTF-8', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')])],
  ['not JSON', '{"name":'],
  ['array', '[1,2,3]'],
  ['scalar', '42'],
  ['null', 'null'],
  ['prototype keys', '{"__proto__":{"x":1},"constructor":{"prototype":{}},"toString":1}'],
];

/** Values put into each documented body field, one at a time. */
const FIELD_VALUES: [string, unknown][] = [
  ['null', null],
  ['huge number', 1e308],
  ['negative', -1],
  ['beyond int4', 99_999_999_999],
  ['fraction', 1.5],
  ['surrogate', 'a\ud800b'],
  ['object', { constructor: 1, __proto__: { polluted: true } }],
  ['array', [[[]]]],
  ['empty string', ''],
  ['long string', 'x'.repeat(70_000)],
  ['prototype name', 'constructor'],
];

/** Values put into each path parameter, one at a time (already URL-encoded). */
const PATH_VALUES: [string, string][] = [
  ['NUL', '%00'],
  ['bad escape', '%E0%A4%A'],
  ['surrogate escape', '%ED%A0%80'],
  ['long', 'a'.repeat(5000)],
  ['huge integer', '99999999999999999999'],
  ['prototype name', '__proto__'],
  ['dot dot', '..%2F..%2Fetc'],
];

/** Values put into each documented query parameter, one at a time (already URL-encoded). */
const QUERY_VALUES: [string, string][] = [
  ['NUL', '%00'],
  ['huge', '1e20'],
  ['beyond int4', '99999999999'],
  ['negative', '-1'],
  ['bad escape', '%E0%A4%A'],
  ['array', 'a&$NAME=b'],
  ['prototype name', 'constructor'],
  ['filter prototype', 'toString:1'],
  ['parentheses', '('.repeat(2000)],
];

interface Sent {
  readonly status: number;
  readonly text: string;
}

/** One raw request with a deadline; a hang is reported as status 0. */
function send(method: string, url: string, body?: Buffer | string, contentType = 'application/json'): Promise<Sent> {
  return new Promise((resolve) => {
    const req = httpRequest(
      url,
      {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': contentType, 'content-length': Buffer.byteLength(body) } : {}),
        },
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve({ status: 0, text: 'no answer within 15 s' });
    });
    req.on('error', (err) => resolve({ status: 0, text: String(err) }));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

beforeAll(async () => {
  // A sandbox worker serves the gateway's endpoint calls: they are swept there (without one, every call is a 503).
  stack = await startStack({ WEBHOOKS_ALLOW_PRIVATE_RECEIVERS: 'true' }, { workers: 1 });
  token = await adminWorkspaceToken(stack, ws);
  const data = `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
  const iam = `${stack.authUrl}/workspace/${ws}/api/v1`;
  const post = async (url: string, body: unknown) => {
    const res = await call('POST', url, { token, body });
    expect([url, res.status]).toEqual([url, expect.any(Number)]);
    return res.body as Record<string, unknown>;
  };
  const collection = await post(`${data}/structures`, {
    name: 'Sweep',
    enableVersioning: true,
    properties: [
      { name: 'name', type: 'string' },
      { name: 'ssn', type: 'string', isSecret: true },
      { name: 'qty', type: 'number' },
    ],
  });
  const record = await post(`${data}/records`, {
    structureId: collection['id'],
    data: { name: 'n', ssn: 'secret-123', qty: 1 },
  });
  const saved = await post(`${data}/saved-queries`, { name: 'all', query: { resource: collection['recordSlug'] } });
  const group = await post(`${iam}/groups`, { name: 'sweepers' });
  const account = await post(`${iam}/service-accounts`, { name: 'sweeper' });
  const key = await post(`${iam}/publishable-keys`, { name: 'k', permissions: ['records:list'] });
  const subscription = await post(`${data}/webhook-subscriptions`, {
    name: 'hook',
    url: 'http://127.0.0.1:9/hook',
    events: ['record_created'],
  });
  await post(`${data}/compute-functions`, {
    name: 'sweep-fn',
    code: 'async function run() { return { success: true }; }',
  });
  const draft = await post(`${data}/drafts`, { resourceType: 'compute-functions', data: { name: 'sweep-draft' } });
  seeded.set('draftId', String(draft['id']));
  seeded.set('version', '1');
  for (const name of ['id', 'structureId']) seeded.set(name, String(collection['id']));
  for (const name of ['recordSlug', 'structureSlug', 'resource']) seeded.set(name, String(collection['recordSlug']));
  seeded.set('recordId', String(record['id']));
  seeded.set('groupId', String(group['id']));
  seeded.set('slug', ws);
  seeded.set('subscriptionId', String(subscription['id']));
  seeded.set('keyId', String(key['id']));
  seeded.set('accountId', String(account['id']));
  seeded.set('savedQueryId', String(saved['id']));
});

afterAll(async () => {
  await stack?.stop();
});

describe('a hostile sweep of every documented route', () => {
  it('never answers a server error, never hangs and never shows a stored secret', async () => {
    const operations = [
      ...(await operationsOf('auth')),
      ...(await operationsOf('data')),
      ...(await operationsOf('webhooks')),
      ...(await operationsOf('compute')),
      ...(await operationsOf('inbound')),
      ...(await operationsOf('orchestration')),
    ].filter((op) => !op.path.startsWith('/oidc') && !op.path.startsWith('/interaction'));
    expect(operations.length).toBeGreaterThan(50);
    const failures: string[] = [];
    let sent = 0;
    const check = (what: string, res: Sent) => {
      sent++;
      if (res.status === 0 || res.status >= 500 || res.text.includes('sv1.')) {
        failures.push(`${what} → ${res.status} ${res.text.slice(0, 200)}`);
      }
    };
    for (const op of operations) {
      const base = urlOf(fill(op.path, {}));
      const label = `${op.method} ${op.path}`;
      for (const [name, value] of PATH_VALUES) {
        for (const param of op.pathParams.filter((p) => p !== 'workspace' && p !== 'workspaceSlug')) {
          const url = urlOf(fill(op.path, { [param]: value }));
          check(`${label} path ${param}=${name}`, await send(op.method, url, op.hasBody ? '{}' : undefined));
        }
      }
      for (const [name, value] of QUERY_VALUES) {
        for (const param of op.queryParams) {
          const url = `${base}?${param.name}=${value.replace('$NAME', param.name)}`;
          check(`${label} query ${param.name}=${name}`, await send(op.method, url, op.hasBody ? '{}' : undefined));
        }
      }
      if (!op.hasBody) continue;
      for (const [name, body] of RAW_BODIES) check(`${label} body ${name}`, await send(op.method, base, body));
      check(`${label} text/plain`, await send(op.method, base, '{"name":"x"}', 'text/plain'));
      check(`${label} form`, await send(op.method, base, 'name=x', 'application/x-www-form-urlencoded'));
      for (const field of op.bodyFields) {
        for (const [name, value] of FIELD_VALUES) {
          const body = JSON.stringify({ [field.name]: value });
          check(`${label} body ${field.name}=${name}`, await send(op.method, base, body));
        }
      }
    }
    expect(sent).toBeGreaterThan(1000);
    expect(failures).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Every query form against hostile input: field names that every JavaScript
 * object inherits, nesting deep enough to exhaust a recursive parser, and secret
 * fields, which are stored encrypted and so can be selected (masked unless the
 * caller holds secrets:reveal) but never compared, sorted, grouped or aggregated.
 */
let stack: Stack;
const ws = `hostile-${Date.now().toString(36)}`;
let token: string;
let reader: string;
let revealer: string;
let people: { id: string };
let companies: { id: string };

const base = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
const api = (method: string, path: string, body?: unknown, bearer = token) =>
  call(method, `${base()}${path}`, { token: bearer, ...(body !== undefined ? { body } : {}) });
const list = (query: string, bearer = token) => api('GET', `/records/slug/people?${query}`, undefined, bearer);
const canonical = (body: Record<string, unknown>, bearer = token) =>
  api('POST', '/records/query', { resource: 'people', ...body }, bearer);
const language = (query: string, parameters?: Record<string, unknown>, bearer = token) =>
  api('POST', '/query', { query, ...(parameters ? { parameters } : {}) }, bearer);

/** The names every object inherits: each must be refused as a field (or resolve to a real property of that name). */
const INHERITED = Object.getOwnPropertyNames(Object.prototype);
/** Inherited names that a property may carry (a letter first): this collection defines `toString`. */
const DEFINED = 'toString';
const UNDEFINED_NAMES = INHERITED.filter((n) => n !== DEFINED);

/** The details of a 400, as one string, for "names the field" checks. */
function problemText(res: { status: number; body: { error?: { details?: unknown } } }): string {
  return JSON.stringify(res.body.error?.details ?? res.body);
}

function expect400Naming(res: { status: number; body: { error?: { details?: unknown } } }, name: string): void {
  expect({ status: res.status, names: problemText(res).includes(name) }).toEqual({ status: 400, names: true });
}

/** A service account in a group of its own holding exactly these policies. */
async function accountWith(name: string, policies: [resource: string, actions: string[]][]): Promise<string> {
  const iam = `${stack.authUrl}/workspace/${ws}/api/v1`;
  const created = async (path: string, body: unknown) => {
    const res = await call('POST', `${iam}${path}`, { token, body });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const group = await created('/groups', { name });
  for (const [resource, actions] of policies) await created(`/groups/${group.id}/policies`, { resource, actions });
  const account = await created('/service-accounts', { name });
  await created(`/groups/${group.id}/members`, { type: 'service_account', id: account.clientId });
  const issued = await fetch(`${stack.authUrl}/oidc/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: account.clientId,
      client_secret: account.clientSecret,
    }),
  });
  return ((await issued.json()) as { access_token: string }).access_token;
}

beforeAll(async () => {
  stack = await startStack();
  token = await adminWorkspaceToken(stack, ws);
  companies = (
    await api('POST', '/structures', {
      name: 'Companies',
      properties: [
        { name: 'name', type: 'string' },
        { name: 'taxId', type: 'string', isSecret: true },
      ],
    })
  ).body;
  const peopleRes = await api('POST', '/structures', {
    name: 'People',
    properties: [
      { name: 'name', type: 'string' },
      { name: 'age', type: 'number' },
      { name: 'ssn', type: 'string', isSecret: true },
      { name: DEFINED, type: 'string' },
      { name: 'address', type: 'object', properties: [{ name: 'city', type: 'string' }] },
      { name: 'employer', type: 'reference', target: 'companies', relationship: 'many-to-one', onDelete: 'restrict' },
    ],
  });
  if (peopleRes.status !== 200) throw new Error(`people: ${peopleRes.status} ${JSON.stringify(peopleRes.body)}`);
  people = peopleRes.body;
  const acme = await api('POST', '/records', { structureId: companies.id, data: { name: 'Acme', taxId: 'TAX-1' } });
  // The records API cannot take a field called toString yet (class-transformer drops keys that
  // name an inherited method from every body): the field is written underneath the API.
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  try {
    for (const [name, age, ssn, shown] of [
      ['ann', 30, 'SSN-ANN', 'a'],
      ['bob', 40, 'SSN-BOB', 'b'],
    ] as const) {
      const res = await api('POST', '/records', {
        structureId: people.id,
        data: { name, age, ssn, address: { city: 'Oslo' }, employer: acme.body.id },
      });
      if (res.status !== 201) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body)}`);
      await client.query(
        `UPDATE data.records SET data = data || jsonb_build_object($2::text, $3::text) WHERE id = $1`,
        [res.body.id, DEFINED, shown],
      );
    }
  } finally {
    await client.end();
  }
  reader = await accountWith('reader', [
    ['records', ['list']],
    ['saved-queries', ['execute', 'create']],
  ]);
  revealer = await accountWith('revealer', [
    ['records', ['list']],
    ['saved-queries', ['execute']],
    ['secrets', ['reveal']],
  ]);
});

afterAll(async () => {
  await stack?.stop();
});

describe('names inherited from Object.prototype', () => {
  it.each(UNDEFINED_NAMES)('%s is refused by name in the list filter, sort and legacy parameters', async (name) => {
    expect400Naming(await list(`filter=${encodeURIComponent(`${name}:x`)}`), name);
    expect400Naming(await list(`filter=${encodeURIComponent(`data.${name}:x`)}`), name);
    expect400Naming(await list(`sort=-${name}`), name);
    expect400Naming(await list(`data.${name}=x`), name);
    expect400Naming(await list(`${encodeURIComponent(`data.name[${name}]`)}=x`), name);
  });

  it.each(UNDEFINED_NAMES)('%s is refused by name in every part of a canonical query', async (name) => {
    expect400Naming(await canonical({ where: { [name]: { eq: 'x' } } }), name);
    expect400Naming(await canonical({ where: { or: [{ [`data.${name}`]: { eq: 'x' } }] } }), name);
    expect400Naming(await canonical({ where: { 'data.name': { [name]: 'x' } } }), name);
    expect400Naming(await canonical({ sort: [{ field: name }] }), name);
    expect400Naming(await canonical({ select: { fields: [`data.${name}`] } }), name);
    expect400Naming(await canonical({ text: { query: 'x', fields: [name] } }), name);
    expect400Naming(await canonical({ include: [{ relation: name.replace(/^_+/, 'x') }] }), name.replace(/^_+/, 'x'));
    expect400Naming(
      await canonical({ joins: [{ foreignSlug: 'companies', localField: name, foreignField: 'id', alias: 'c' }] }),
      name,
    );
    expect400Naming(
      await canonical({
        joins: [{ foreignSlug: 'companies', localField: 'id', foreignField: `data.${name}`, alias: 'c' }],
      }),
      name,
    );
  });

  it.each(UNDEFINED_NAMES)('%s is refused by name in every clause of the string language', async (name) => {
    const quoted = `"${name}"`;
    for (const query of [
      `FROM people WHERE ${quoted} = 'x'`,
      `FROM people WHERE data.${quoted} = 'x'`,
      `FROM people ORDER BY ${quoted}`,
      `SELECT ${quoted} FROM people`,
      `SELECT ${quoted}, COUNT(*) FROM people GROUP BY ${quoted}`,
      `SELECT MAX(${quoted}) FROM people`,
      `FROM people WHERE SEARCH('x') IN (${quoted})`,
      `FROM people INCLUDE ${quoted} FROM companies`,
      `FROM people INCLUDE employer FROM companies WHERE ${quoted} = 'x'`,
    ]) {
      const res = await language(query);
      expect({ query, status: res.status, names: problemText(res).includes(name) }).toEqual({
        query,
        status: 400,
        names: true,
      });
    }
    // A named parameter that was not given, even one every object inherits.
    expect400Naming(await language(`FROM people WHERE name = :${name}`, {}), `:${name}`);
  });

  it('resolves a property that is really called toString, in every form', async () => {
    const names = (res: { body: { results?: { data: { name: string } }[]; data?: { data: { name: string } }[] } }) =>
      (res.body.results ?? res.body.data ?? []).map((r) => r.data.name);
    expect(names(await list(`filter=${DEFINED}:b&sort=-${DEFINED}`))).toEqual(['bob']);
    expect(names(await list(`data.${DEFINED}=a`))).toEqual(['ann']);
    expect(names(await canonical({ where: { [`data.${DEFINED}`]: { eq: 'b' } } }))).toEqual(['bob']);
    expect(names(await canonical({ sort: [{ field: `data.${DEFINED}`, direction: 'desc' }] }))).toEqual(['bob', 'ann']);
    expect(names(await language(`FROM people WHERE ${DEFINED} = 'a'`))).toEqual(['ann']);
    const grouped = await language(`SELECT ${DEFINED}, COUNT(*) AS n FROM people GROUP BY ${DEFINED}`);
    expect(grouped.body.data).toEqual([
      { [DEFINED]: 'a', n: 1 },
      { [DEFINED]: 'b', n: 1 },
    ]);
    const selected = await language(`SELECT ${DEFINED} FROM people ORDER BY ${DEFINED}`);
    expect(selected.body.data.map((r: { data: Record<string, unknown> }) => r.data)).toEqual([
      { [DEFINED]: 'a' },
      { [DEFINED]: 'b' },
    ]);
  });

  it('refuses the names that the body pipe would drop (constructor, __proto__, prototype) as keys, by path', async () => {
    for (const name of ['constructor', '__proto__', 'prototype']) {
      const res = await canonical({ where: { [name]: { eq: 'x' } } });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: `where.${name}` })]),
      );
      const parameters = await language(`FROM people WHERE name = :p`, { p: 'ann', [name]: 'x' });
      expect(parameters.status).toBe(400);
      expect(parameters.body.error.details).toEqual([expect.objectContaining({ field: `parameters.${name}` })]);
    }
  });

  it('keeps a stored field called __proto__ a field, and never pollutes Object.prototype', async () => {
    const loose = (await api('POST', '/structures', { name: 'Loose', schemaDiscoveryMode: 'schemaless' })).body;
    // The body pipe drops such keys on the way in, but stored data may hold them: plant one underneath the API.
    const created = await api('POST', '/records', { structureId: loose.id, data: { name: 'planted' } });
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      await client.query(`UPDATE data.records SET data = $2::jsonb WHERE id = $1`, [
        created.body.id,
        '{"name": "planted", "__proto__": {"polluted": "yes"}, "constructor": {"polluted": "too"}}',
      ]);
    } finally {
      await client.end();
    }
    const selected = await api('POST', '/query', {
      query: 'SELECT "__proto__".polluted, data.constructor.polluted FROM loose',
    });
    expect(selected.status).toBe(200);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    const row = selected.body.data[0].data as Record<string, unknown>;
    expect(Object.keys(row).sort()).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(row))).toEqual(
      JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"polluted": "too"}}'),
    );
    const viaCanonical = await api('POST', '/records/query', {
      resource: 'loose',
      select: { fields: ['data.__proto__.polluted'] },
    });
    expect(viaCanonical.status).toBe(200);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    // Schemaless fields compare as text: a stored field named constructor is found by its value.
    const filtered = await api('POST', '/records/query', {
      resource: 'loose',
      where: { 'data.constructor.polluted': { eq: 'too' } },
    });
    expect(filtered.body.data).toHaveLength(1);
  });

  it('checks saved-query variables by own name: declared, given and undeclared', async () => {
    const created = await api(
      'POST',
      '/saved-queries',
      {
        name: 'by-tostring',
        query: { resource: 'people', where: { [`data.${DEFINED}`]: { eq: '${toString}' } } },
        variables: { toString: { type: 'string' } },
      },
      reader,
    );
    expect(created.status).toBe(201);
    const run = await api('POST', `/saved-queries/${created.body.id}/execute`, { variables: { toString: 'b' } });
    expect(run.status).toBe(200);
    expect(run.body.data.map((r: { data: { name: string } }) => r.data.name)).toEqual(['bob']);
    // Not given: the required variable is missing (it is not found on the prototype).
    const missing = await api('POST', `/saved-queries/${created.body.id}/execute`, { variables: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details).toEqual([{ field: 'variables.toString', message: 'is required' }]);
    const undeclared = await api('POST', `/saved-queries/${created.body.id}/execute`, {
      variables: { toString: 'b', valueOf: 1 },
    });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error.details).toEqual([
      { field: 'variables.valueOf', message: 'is not a variable of this query' },
    ]);
    // Used but not declared, though every object has one.
    for (const name of ['valueOf', 'hasOwnProperty', '__proto__', 'constructor']) {
      const res = await api('POST', '/saved-queries', {
        name: `undeclared-${name}`,
        query: { resource: 'people', where: { 'data.name': { eq: `\${${name}}` } } },
      });
      expect400Naming(res, `variables.${name}`);
    }
    for (const name of UNDEFINED_NAMES) {
      const res = await api('POST', '/saved-queries', {
        name: `field-${name}`,
        query: { resource: 'people', where: { [`data.${name}`]: { eq: '${v}' } } },
        variables: { v: { type: 'string' } },
      });
      expect400Naming(res, name);
    }
  });
});

describe('nesting', () => {
  const deep = 2000;

  it.each([
    ['parentheses', `FROM people WHERE ${'('.repeat(deep)}name = 'x'${')'.repeat(deep)}`],
    ['NOT', `FROM people WHERE ${'NOT '.repeat(deep)}name = 'x'`],
    ['parentheses and NOT', `FROM people WHERE ${'NOT ('.repeat(deep / 2)}name = 'x'${')'.repeat(deep / 2)}`],
    ['an unclosed run of parentheses', `FROM people WHERE ${'('.repeat(deep)}`],
  ])('%s in the string language are a 400 with the limit', async (_label, query) => {
    const res = await language(query);
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].message).toMatch(/nest.* deeper than 32 levels/);
  });

  it('accepts nesting within the limit', async () => {
    const res = await language(`FROM people WHERE ${'NOT '.repeat(10)}${'('.repeat(20)}name = 'ann'${')'.repeat(20)}`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { data: { name: string } }) => r.data.name)).toEqual(['ann']);
  });

  const nested = (combinator: 'and' | 'or' | 'not', depth: number): Record<string, unknown> => {
    let where: Record<string, unknown> = { 'data.name': { eq: 'ann' } };
    for (let i = 0; i < depth; i++) where = combinator === 'not' ? { not: where } : { [combinator]: [where] };
    return where;
  };

  it.each(['and', 'or', 'not'] as const)('%s nested 2000 deep in a canonical where is a 400', async (combinator) => {
    const res = await canonical({ where: nested(combinator, deep) });
    expect(res.status).toBe(400);
    // Bounded once, at the edge, before any parser or transformer (docs/requests.md).
    expect(res.body.error.details).toEqual([
      { field: expect.stringMatching(/^where\./), message: expect.stringMatching(/deeper than 64 levels/) },
    ]);
    const saved = await api('POST', '/saved-queries', {
      name: `deep-${combinator}`,
      query: { resource: 'people', where: nested(combinator, deep) },
    });
    expect(saved.status).toBe(400);
    expect(problemText(saved)).toMatch(/deeper than 64 levels/);
  });

  it('names the level where a canonical where goes past 8', async () => {
    expect((await canonical({ where: nested('not', 7) })).status).toBe(200);
    const res = await canonical({ where: nested('and', 9) });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { field: `where${'.and[0]'.repeat(8)}`, message: 'nests deeper than 8 levels' },
    ]);
  });
});

describe('secret fields', () => {
  const refusals = (res: { status: number; body: { error?: { details?: unknown } } }, field: string) => {
    const text = problemText(res);
    expect({ status: res.status, secret: text.includes('is a secret field'), names: text.includes(field) }).toEqual({
      status: 400,
      secret: true,
      names: true,
    });
    expect(JSON.stringify(res.body)).not.toMatch(/sv1\./);
  };

  it('cannot be filtered or sorted in the list, whatever the form', async () => {
    refusals(await list('filter=ssn:SSN-ANN'), 'ssn');
    refusals(await list('filter=data.ssn:>A'), 'ssn');
    refusals(await list('sort=ssn'), 'ssn');
    refusals(await list('data.ssn=SSN-ANN'), 'ssn');
    refusals(await list(`${encodeURIComponent('data.ssn[startswith]')}=SSN`), 'ssn');
  });

  it('cannot be filtered, sorted, searched or joined on in a canonical query', async () => {
    refusals(await canonical({ where: { 'data.ssn': { eq: 'SSN-ANN' } } }), 'ssn');
    refusals(await canonical({ where: { not: { 'data.ssn': { exists: true } } } }), 'ssn');
    refusals(await canonical({ sort: [{ field: 'data.ssn' }] }), 'ssn');
    refusals(await canonical({ text: { query: 'SSN', fields: ['data.name', 'data.ssn'] } }), 'ssn');
    refusals(
      await canonical({
        joins: [{ foreignSlug: 'companies', localField: 'data.ssn', foreignField: 'data.name', alias: 'c' }],
      }),
      'ssn',
    );
    refusals(
      await canonical({
        joins: [{ foreignSlug: 'companies', localField: 'data.name', foreignField: 'data.taxId', alias: 'c' }],
      }),
      'taxId',
    );
  });

  it.each([
    ['WHERE', "FROM people WHERE ssn = 'SSN-ANN'"],
    ['IS NULL', 'FROM people WHERE ssn IS NULL'],
    ['ORDER BY', 'FROM people ORDER BY ssn'],
    ['GROUP BY', 'SELECT ssn, COUNT(*) FROM people GROUP BY ssn'],
    ['MIN', 'SELECT MIN(ssn) FROM people'],
    ['MAX', 'SELECT MAX(ssn) AS top FROM people'],
    ['COUNT', 'SELECT COUNT(ssn) FROM people'],
    ['SEARCH', "FROM people WHERE SEARCH('SSN') IN (name, ssn)"],
    ['INCLUDE ... WHERE', "FROM people INCLUDE employer FROM companies WHERE taxId = 'TAX-1'"],
  ])('cannot be used in %s of the string language', async (_label, query) => {
    refusals(await language(query), query.includes('taxId') ? 'taxId' : 'ssn');
  });

  it('is refused in a saved query when it is saved, and when it runs after the field became secret', async () => {
    refusals(
      await api('POST', '/saved-queries', {
        name: 'by-ssn',
        query: { resource: 'people', where: { 'data.ssn': { eq: '${ssn}' } } },
        variables: { ssn: { type: 'string' } },
      }),
      'ssn',
    );
    refusals(await api('POST', '/saved-queries/people/test', { query: { sort: [{ field: 'data.ssn' }] } }), 'ssn');
    const badges = (
      await api('POST', '/structures', { name: 'Badges', properties: [{ name: 'code', type: 'string' }] })
    ).body;
    await api('POST', '/records', { structureId: badges.id, data: { code: 'B-1' } });
    const saved = await api('POST', '/saved-queries', {
      name: 'by-code',
      query: { resource: 'badges', where: { 'data.code': { eq: '${code}' } } },
      variables: { code: { type: 'string' } },
    });
    expect(saved.status).toBe(201);
    expect((await api('POST', `/saved-queries/${saved.body.id}/execute`, { variables: { code: 'B-1' } })).status).toBe(
      200,
    );
    const changed = await api('PUT', `/structures/${badges.id}`, {
      properties: [{ name: 'code', type: 'string', isSecret: true }],
    });
    expect(changed.status).toBe(200);
    refusals(await api('POST', `/saved-queries/${saved.body.id}/execute`, { variables: { code: 'B-1' } }), 'code');
  });

  it('is masked when selected, unless the caller holds secrets:reveal', async () => {
    const shown = (bearer: string) => async () => {
      const viaLanguage = await language("SELECT name, ssn FROM people WHERE name = 'ann'", undefined, bearer);
      const viaCanonical = await canonical(
        { where: { 'data.name': { eq: 'ann' } }, select: { fields: ['data.name', 'data.ssn'] } },
        bearer,
      );
      const joined = await canonical(
        {
          where: { 'data.name': { eq: 'ann' } },
          joins: [{ foreignSlug: 'companies', localField: 'employer', foreignField: 'id', alias: 'company' }],
        },
        bearer,
      );
      const included = await language(
        "FROM people WHERE name = 'ann' INCLUDE employer FROM companies",
        undefined,
        bearer,
      );
      const test = await api(
        'POST',
        '/saved-queries/people/test',
        { query: { where: { 'data.name': { eq: 'ann' } }, select: { fields: ['data.ssn'] } } },
        bearer,
      );
      for (const res of [viaLanguage, viaCanonical, joined, included, test]) expect(res.status).toBe(200);
      return {
        language: viaLanguage.body.data[0].data.ssn,
        canonical: viaCanonical.body.data[0].data.ssn,
        joined: [joined.body.data[0].data.ssn, joined.body.data[0]._joined.company.data.taxId],
        included: included.body.data[0].data._expanded.employer.data.taxId,
        saved: test.body.data[0].data.ssn,
      };
    };
    expect(await shown(reader)()).toEqual({
      language: '********',
      canonical: '********',
      joined: ['********', '********'],
      included: '********',
      saved: '********',
    });
    expect(await shown(revealer)()).toEqual({
      language: 'SSN-ANN',
      canonical: 'SSN-ANN',
      joined: ['SSN-ANN', 'TAX-1'],
      included: 'TAX-1',
      saved: 'SSN-ANN',
    });
  });

  it('is masked in saved-query results for a caller without secrets:reveal, plaintext for one with it', async () => {
    const saved = await api('POST', '/saved-queries', {
      name: 'people-by-age',
      query: { resource: 'people', where: { 'data.age': { gte: '${min}' } }, sort: [{ field: 'data.age' }] },
      variables: { min: { type: 'number' } },
    });
    expect(saved.status).toBe(201);
    const ssns = async (bearer: string) =>
      (await api('POST', `/saved-queries/${saved.body.id}/execute`, { variables: { min: 0 } }, bearer)).body.data.map(
        (r: { data: { ssn: string } }) => r.data.ssn,
      );
    expect(await ssns(reader)).toEqual(['********', '********']);
    expect(await ssns(revealer)).toEqual(['SSN-ANN', 'SSN-BOB']);
  });

  it('cannot be the default search field', async () => {
    const res = await api('POST', '/structures', {
      name: 'Vault',
      properties: [{ name: 'pin', type: 'string', isSecret: true }],
      defaultSearchField: 'pin',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { field: 'defaultSearchField', message: expect.stringContaining('secret') },
    ]);
  });
});

describe('problems of every stage, reported together', () => {
  it('POST /structures lists a bad name and bad property definitions at once', async () => {
    const res = await api('POST', '/structures', {
      name: '',
      enableVersioning: 'yes',
      properties: [
        { name: '1st', type: 'string' },
        { name: 'n', type: 'number', minimum: 5, maximum: 1 },
        { name: 'r', type: 'reference', target: 'nowhere', relationship: 'many-to-one', onDelete: 'restrict' },
      ],
    });
    expect(res.status).toBe(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual([
      'enableVersioning',
      'name',
      'properties[0].name',
      'properties[1].minimum',
      'properties[2].target',
    ]);
  });

  it('PUT /structures/{id} lists a bad name and bad property definitions at once', async () => {
    const res = await api('PUT', `/structures/${companies.id}`, {
      name: 42,
      properties: [{ name: 'name', type: 'text' }],
      defaultSearchField: 'nothing',
    });
    expect(res.status).toBe(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['defaultSearchField', 'name', 'properties[0].type']);
  });

  it('a saved query lists a bad name and a bad definition at once', async () => {
    const res = await api('POST', '/saved-queries', {
      name: '',
      query: { resource: 'people', where: { 'data.nothing': { eq: '${v}' } }, sort: [{ field: 'data.ssn' }] },
      variables: { v: { type: 'string', kind: 'text' } },
    });
    expect(res.status).toBe(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['name', 'query.sort[0].field', 'query.where.data.nothing', 'variables.v.kind']);
  });

  it('a canonical query lists body problems and field problems at once', async () => {
    const res = await canonical({
      page: { limit: 500 },
      where: { 'data.nothing': { eq: 1 } },
      sort: [{ field: 'data.ssn' }],
    });
    expect(res.status).toBe(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['page.limit', 'sort[0].field', 'where.data.nothing']);
  });
});

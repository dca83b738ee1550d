/**
 * `node bench/dist/routing.js` → what a record create costs each process when the
 * record-event consumers (webhooks, compute's worker, orchestration) run beside the data
 * service: (1) in a workspace no consumer is interested in, with no other workspace holding
 * any interest; (2) the same while 10 OTHER workspaces each hold an event-driven trigger, a
 * webhook subscription and an active event-driven orchestration. With routed events
 * (docs/events.md, ADR 0011) both cost the same and the consumers' CPU per create is
 * about nothing: the events of a workspace nobody wants reach no consumer.
 */
import { call } from '@strata/testkit';
import { loginWithPassword } from '@strata/sdk';
import { BenchClient } from './http.js';
import { cpuPerOp, sampleCpu } from './cpu.js';
import { describe, measure } from './measure.js';
import { benchWorkspace, startUnlimitedServices, type Services } from './services.js';

const TOTAL = Number(process.env['BENCH_RECORDS'] ?? 2000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 8);
const OTHERS = 10;

/** A workspace with a collection `things`, an event-driven trigger, a subscription and an orchestration on it. */
async function interested(services: Services, slug: string): Promise<void> {
  const login = { authUrl: services.authUrl, email: services.adminEmail, password: services.adminPassword };
  const admin = await loginWithPassword(login);
  const ws = await call('POST', `${services.authUrl}/workspace/api/v1/workspaces`, {
    token: admin.accessToken,
    body: { slug, name: slug },
  });
  if (ws.status !== 201) throw new Error(`workspace: ${JSON.stringify(ws.body)}`);
  const token = (await loginWithPassword({ ...login, workspace: slug })).accessToken;
  const must = async (what: string, res: Promise<{ status: number; body: any }>) => {
    const r = await res;
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const data = `${services.dataUrl}/data/workspace/${slug}/api/v1`;
  const compute = `${services.computeUrl}/data/workspace/${slug}/api/v1`;
  await must(
    'collection',
    call('POST', `${data}/structures`, { token, body: { name: 'Things', recordSlug: 'things', properties: [] } }),
  );
  const fn = await must(
    'function',
    call('POST', `${compute}/compute-functions`, {
      token,
      body: { name: 'noop', code: 'async function run() { return {}; }' },
    }),
  );
  await must(
    'trigger',
    call('POST', `${compute}/function-triggers`, {
      token,
      body: {
        functionId: fn.id,
        name: 'on-thing',
        executionType: 'event-driven',
        triggerMetadata: { event: 'record_created', recordSlug: 'things' },
      },
    }),
  );
  await must(
    'subscription',
    call('POST', `${services.webhooksUrl}/data/workspace/${slug}/api/v1/webhook-subscriptions`, {
      token,
      body: { name: 'h', url: 'https://hooks.example.test/x', events: ['record_created'], recordSlugs: ['things'] },
    }),
  );
  await must(
    'orchestration',
    call('POST', `${services.orchestrationUrl}/orchestration/ws/${slug}/api/v1/orchestrations`, {
      token,
      body: {
        slug: 'on-thing',
        name: 'On thing',
        status: 'active',
        trigger: { type: 'event-driven', eventType: 'record_created', structureSlug: 'things' },
        steps: [{ id: 'pause', type: 'delay', delayMs: 1 }],
      },
    }),
  );
}

async function main(): Promise<void> {
  const services = await startUnlimitedServices({}, ['auth', 'data', 'webhooks', 'compute', 'worker', 'orchestration']);
  try {
    const { token, base } = await benchWorkspace(services);
    const created = await call('POST', `${base}/structures`, {
      token,
      body: { name: 'People', properties: [{ name: 'name', type: 'string' }] },
    });
    if (created.status !== 200) throw new Error(`collection: ${JSON.stringify(created.body)}`);
    const structureId = created.body.id as string;
    const http = new BenchClient(token, CONCURRENCY);
    const create = (run: string) => async (i: number) => {
      const res = await http.send('POST', `${base}/records`, { structureId, data: { name: `${run}-${i}` } });
      if (res.status !== 201) throw new Error(`record ${i}: ${res.status} ${JSON.stringify(res.body)}`);
    };
    const cpu = () =>
      sampleCpu({
        data: services.pid('data'),
        webhooks: services.pid('webhooks'),
        compute: services.pid('compute'),
        worker: services.pid('worker'),
        orchestration: services.pid('orchestration'),
      });
    const phase = async (run: string) => {
      await measure(300, CONCURRENCY, create(`warm-${run}`));
      const before = cpu();
      const result = await measure(TOTAL, CONCURRENCY, create(run));
      // The events leave after the answers; give the relay and any consumer a moment to finish them.
      await new Promise((r) => setTimeout(r, 2000));
      return { result, cpu: cpuPerOp(before, cpu(), TOTAL) };
    };

    const alone = await phase('alone');
    for (let i = 0; i < OTHERS; i++) await interested(services, `bench-other-${i}`);
    const beside = await phase('beside');
    process.stdout.write(
      [
        `routing/create  ${TOTAL} records, concurrency ${CONCURRENCY}; data, webhooks, compute API and worker, orchestration in their own processes`,
        `  (1) no interest anywhere          ${describe(alone.result)}`,
        `      CPU ms per create: ${alone.cpu}`,
        `  (2) ${OTHERS} other workspaces interested ${describe(beside.result)}`,
        `      CPU ms per create: ${beside.cpu}`,
        '',
      ].join('\n'),
    );
    http.close();
  } finally {
    await services.stop();
  }
}

await main();

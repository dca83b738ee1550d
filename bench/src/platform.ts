/**
 * `pnpm bench` → record creates through the whole platform as `npm start` runs it, beside
 * the data service alone in the same run (issue 37).
 *
 * Phase A: auth and data only, as `bench/src/records.ts` starts them (their own processes,
 * no log output), creates sent straight to the data service.
 * Phase A2: auth and data only, started as `npm start` starts them (node flags, log level,
 * sed pipes): against A, what start.sh's command lines cost; against B, what the other
 * processes sharing the cores cost.
 * Phase B: every process of `scripts/services.list` (every service, the compute worker, the
 * gateway) with start.sh's node flags, environment defaults and `| sed` log pipes
 * (`bench/src/platform-processes.ts`); creates sent through the gateway, then straight to
 * the data service (the gateway hop is the difference).
 *
 * Each run: a collection of 5 properties (1 unique, 2 indexed), `BENCH_PLATFORM_WARMUP`
 * creates to warm up, then `BENCH_PLATFORM_CREATES` by `BENCH_CONCURRENCY` keep-alive
 * clients; creates/s, p50/p99, and the CPU each process spent per create (/proc, sampled
 * once the event consumers have caught up, so work a create causes later counts too).
 * `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"` profiles every process of both
 * phases; `BENCH_LOG_DIR` keeps their logs.
 */
import pg from 'pg';
import { call } from '@strata/testkit';
import { BenchClient } from './http.js';
import { sampleCpu, type CpuSample } from './cpu.js';
import { measure, type Measurement } from './measure.js';
import { benchWorkspace, startUnlimitedServices } from './services.js';
import { startPlatform } from './platform-processes.js';
import { formatReadCase, runReadCases } from './read-cases.js';

const TOTAL = Number(process.env['BENCH_PLATFORM_CREATES'] ?? 3000);
const WARMUP = Number(process.env['BENCH_PLATFORM_WARMUP'] ?? 1000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 8);

const PROPERTIES = [
  { name: 'email', type: 'string', required: true, isUnique: true, maxLength: 200 },
  { name: 'name', type: 'string', required: true, maxLength: 100 },
  { name: 'age', type: 'number', minimum: 0, maximum: 150, indexed: true },
  { name: 'tier', type: 'string', enum: ['free', 'pro', 'team'], default: 'free', indexed: true },
  { name: 'active', type: 'boolean', default: true },
];

function recordData(i: number, run: string): Record<string, unknown> {
  return {
    email: `user-${run}-${i}@example.com`,
    name: `User ${i}`,
    age: 20 + (i % 50),
    tier: ['free', 'pro', 'team'][i % 3],
    active: i % 2 === 0,
  };
}

interface Run {
  readonly label: string;
  readonly m: Measurement;
  /** CPU ms per create, per process group (idle cost included). */
  readonly cpu: ReadonlyMap<string, number>;
  /** CPU ms per second while no request arrives (timers, pollers, heartbeats), per process group. */
  readonly idle: ReadonlyMap<string, number>;
  /** Milliseconds between the CPU samples around the creates (the idle cost accrues over them). */
  readonly windowMs: number;
  /** Creates answered with anything but 201 (a loaded machine can time out a lookup), and the first such answer. */
  readonly failed: number;
  readonly firstFailure?: string;
}

const IDLE_MS = 5000;

type Pids = () => Record<string, number | readonly number[] | undefined>;

/** A collection of its own for the phase; answers its id. */
async function collection(token: string, base: string): Promise<string> {
  const created = await call('POST', `${base}/structures`, {
    token,
    body: { name: 'People', enableVersioning: true, properties: PROPERTIES },
  });
  if (created.status !== 200) throw new Error(`collection: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.id as string;
}

/**
 * Waits until the processes' CPU stops growing (the relay and the event consumers have
 * caught up with the creates), at most 30 s, and answers the sample taken then.
 */
async function settled(
  sample: () => CpuSample,
  groups: readonly string[],
): Promise<{ readonly cpu: CpuSample; readonly at: number }> {
  const total = (s: CpuSample) => groups.reduce((sum, g) => sum + (s.get(g) ?? 0), 0);
  let last = { cpu: sample(), at: performance.now() };
  for (let waited = 0; waited < 30_000; waited += 500) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const next = { cpu: sample(), at: performance.now() };
    // Less than 4% of a core over half a second: idle timers and heartbeats.
    if (total(next.cpu) - total(last.cpu) < 20) return last;
    last = next;
  }
  return last;
}

/** CPU ms per unit between two samples, per group. */
function perUnit(before: CpuSample, after: CpuSample, units: number): Map<string, number> {
  return new Map([...after].map(([group, ms]) => [group, (ms - (before.get(group) ?? 0)) / units] as const));
}

async function creates(
  label: string,
  token: string,
  recordsUrl: string,
  structureId: string,
  pids: Pids,
  database: string,
): Promise<Run> {
  const http = new BenchClient(token, CONCURRENCY);
  const run = label.replace(/\W+/g, '-');
  let failed = 0;
  let firstFailure: string | undefined;
  const send = (tag: string) => async (i: number) => {
    const res = await http.send('POST', recordsUrl, { structureId, data: recordData(i, `${run}-${tag}`) });
    if (res.status === 201) return;
    // Counted and shown, not fatal: on a machine shared with other work a lookup can time out.
    failed++;
    firstFailure ??= `${res.status} ${JSON.stringify(res.body)}`;
    if (failed > 50) throw new Error(`${label}: more than 50 creates failed, the first: ${firstFailure}`);
  };
  const sample = () => sampleCpu(pids(), { postgresDatabase: database });
  const quiet = (s: CpuSample) =>
    settled(
      sample,
      [...s.keys()].filter((g) => g !== 'postgres' && g !== 'nats-server'),
    );
  try {
    await measure(WARMUP, CONCURRENCY, send('warm'));
    // What the processes spend doing nothing (per second), then the creates.
    const quietBefore = await quiet(sample());
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const before = { cpu: sample(), at: performance.now() };
    const idle = perUnit(quietBefore.cpu, before.cpu, (before.at - quietBefore.at) / 1000);
    const m = await measure(TOTAL, CONCURRENCY, send('run'));
    const after = await quiet(sample());
    const cpu = perUnit(before.cpu, after.cpu, TOTAL);
    const windowMs = after.at - before.at;
    return { label, m, cpu, idle, windowMs, failed, ...(firstFailure ? { firstFailure } : {}) };
  } finally {
    http.close();
  }
}

/** Records of the read cases' collection (`BENCH_PLATFORM_READ_RECORDS`; 0 skips the read cases). */
const READ_RECORDS = Number(process.env['BENCH_PLATFORM_READ_RECORDS'] ?? 20_000);
/** Requests per read case on each side (`BENCH_PLATFORM_READ_RUNS`). */
const READ_RUNS = Number(process.env['BENCH_PLATFORM_READ_RUNS'] ?? 50);

/**
 * The read cases of bench/src/read-cases.ts against the same data API (`base`: the data
 * service itself in A, the gateway in B) with their typed-table yardstick, in a collection of
 * their own (`reads`) of the benchmark's workspace.
 */
async function readCases(label: string, base: string, token: string, databaseUrl: string): Promise<string[]> {
  if (READ_RECORDS <= 0) return [`  read cases (${label}): skipped (BENCH_PLATFORM_READ_RECORDS=0)`];
  const db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const lines: string[] = [`  read cases (${label}), ${READ_RECORDS} records, ${READ_RUNS} runs a case:`];
  try {
    const results = await runReadCases({
      base,
      token,
      db,
      workspace: 'bench',
      databaseUrl,
      records: READ_RECORDS,
      runs: READ_RUNS,
      walkPages: 50,
      slug: 'reads',
      log: () => undefined,
    });
    lines.push(...results.map(formatReadCase));
  } finally {
    await db.end();
  }
  return lines;
}

function line(r: Run): string {
  const failures = r.failed ? `  ${r.failed} failed (first: ${r.firstFailure})` : '';
  return `  ${r.label.padEnd(34)} ${r.m.perSecond.toFixed(0).padStart(6)} creates/s  p50 ${r.m.p50Ms.toFixed(1).padStart(5)} ms  p99 ${r.m.p99Ms.toFixed(1).padStart(6)} ms${failures}`;
}

const NAME_WIDTH = 32;

function cpuTable(runs: readonly Run[]): string[] {
  const groups = [...new Set(runs.flatMap((r) => [...r.cpu.keys()]))];
  const order = (g: string) =>
    g === 'postgres backends' ? 1 : g === 'postgres' || g === 'nats-server' ? 2 : g === 'bench client' ? 3 : 0;
  groups.sort((a, b) => order(a) - order(b));
  const cell = (r: Run, g: string) => (r.cpu.has(g) ? r.cpu.get(g)!.toFixed(2) : '-').padStart(17);
  const names: Record<string, string> = {
    postgres: 'postgres (whole machine)',
    'nats-server': 'nats-server (whole machine)',
    'postgres backends': "postgres (this run's backends)",
  };
  // Ours: every process of the platform, its log pipes, this run's PostgreSQL backends and NATS.
  const ours = (r: Run) =>
    [...r.cpu]
      .filter(([g]) => g !== 'postgres' && g !== 'bench client')
      .reduce((sum, [, ms]) => sum + ms, 0)
      .toFixed(2)
      .padStart(17);
  const idleCell = (r: Run, g: string) => (r.idle.has(g) ? r.idle.get(g)!.toFixed(1) : '-').padStart(17);
  // The creates' own cost: the idle cost over the window taken out.
  const net = (r: Run, g: string) => {
    const ms = r.cpu.get(g);
    return (ms === undefined ? '-' : (ms - ((r.idle.get(g) ?? 0) * r.windowMs) / 1000 / TOTAL).toFixed(2)).padStart(17);
  };
  const header = (title: string) => `  ${title.padEnd(NAME_WIDTH)}${runs.map((r) => r.label.padStart(17)).join('')}`;
  const row = (g: string, f: (r: Run, g: string) => string) =>
    `    ${(names[g] ?? g).padEnd(NAME_WIDTH - 2)}${runs.map((r) => f(r, g)).join('')}`;
  return [
    header('CPU ms per create'),
    ...groups.map((g) => row(g, cell)),
    `    ${'total (without machine pg)'.padEnd(NAME_WIDTH - 2)}${runs.map(ours).join('')}`,
    header('idle CPU ms per second'),
    // Not the PostgreSQL backends: a pool closes idle connections, and a backend that ends takes its time away.
    ...groups.filter((g) => !g.startsWith('postgres') && g !== 'nats-server').map((g) => row(g, idleCell)),
    header('CPU ms per create, idle out'),
    ...groups.filter((g) => !g.startsWith('postgres') && g !== 'nats-server').map((g) => row(g, net)),
  ];
}

async function phaseA(): Promise<{ run: Run; reads: string[] }> {
  const services = await startUnlimitedServices({}, ['auth', 'data']);
  try {
    const { token, base } = await benchWorkspace(services);
    const structureId = await collection(token, base);
    const database = new URL(services.databaseUrl).pathname.slice(1);
    const pids: Pids = () => ({
      data: services.pid('data'),
      auth: services.pid('auth'),
      'bench client': process.pid,
    });
    const run = await creates('A data alone', token, `${base}/records`, structureId, pids, database);
    return { run, reads: await readCases('A data alone', base, token, services.databaseUrl) };
  } finally {
    await services.stop();
  }
}

/**
 * Phase A2: auth and data alone, but started as `npm start` starts them (node flags, log
 * level, sed pipes): what differs from phase B is only the other processes sharing the cores.
 */
async function phaseA2(): Promise<Run> {
  const platform = await startPlatform(['auth', 'data']);
  try {
    const { token, base } = await benchWorkspace(platform);
    const structureId = await collection(token, base);
    const pids: Pids = () => {
      const all = platform.pids();
      return {
        data: all['data'],
        auth: all['auth'],
        'log pipes (sed)': [all['log pipe data'], all['log pipe auth']].filter((p) => p !== undefined),
        'bench client': process.pid,
      };
    };
    return await creates('A2 as npm start', token, `${base}/records`, structureId, pids, platform.databaseName);
  } finally {
    await platform.stop();
  }
}

async function phaseB(): Promise<{ runs: Run[]; reads: string[] }> {
  const platform = await startPlatform();
  try {
    const { token, base } = await benchWorkspace(platform);
    const structureId = await collection(token, base);
    const pids: Pids = () => {
      const all = platform.pids();
      const out: Record<string, number | readonly number[] | undefined> = {};
      const pipes: number[] = [];
      for (const [name, pid] of Object.entries(all)) {
        if (name.startsWith('log pipe ')) {
          if (pid !== undefined) pipes.push(pid);
        } else out[name] = pid;
      }
      out['compute sandboxes'] = platform.sandboxPids();
      out['log pipes (sed)'] = pipes;
      out['bench client'] = process.pid;
      return out;
    };
    const gatewayBase = base.replace(platform.dataUrl, platform.gatewayUrl);
    const viaGateway = await creates(
      'B gateway',
      token,
      `${gatewayBase}/records`,
      structureId,
      pids,
      platform.databaseName,
    );
    const direct = await creates('B direct', token, `${base}/records`, structureId, pids, platform.databaseName);
    return {
      runs: [viaGateway, direct],
      reads: await readCases('B whole platform', gatewayBase, token, platform.databaseUrl),
    };
  } finally {
    await platform.stop();
  }
}

/** `BENCH_PLATFORM_PHASES=A,A2` runs only those phases (all three by default). */
const PHASES = (process.env['BENCH_PLATFORM_PHASES'] ?? 'A,A2,B').split(',');

async function main(): Promise<void> {
  if (!PHASES.includes('B')) {
    // A comparison of the data service alone: A (as bench/records) beside A2 (as npm start).
    const a = PHASES.includes('A') ? (await phaseA()).run : undefined;
    const a2 = PHASES.includes('A2') ? await phaseA2() : undefined;
    const runs = [a, a2].filter((r): r is Run => r !== undefined);
    process.stdout.write([...runs.map(line), ...cpuTable(runs), ''].join('\n'));
    return;
  }
  const a = await phaseA();
  // Phase A's figures as soon as they exist: phase B takes minutes to start on a loaded machine.
  process.stdout.write(`${line({ ...a.run, label: 'A data service alone, direct' })} (phase A done)\n`);
  const a2 = await phaseA2();
  process.stdout.write(`${line({ ...a2, label: 'A2 auth + data as npm start' })} (phase A2 done)\n`);
  const b = await phaseB();
  const [viaGateway, direct] = b.runs as [Run, Run];
  process.stdout.write(
    [
      `platform/create  ${TOTAL} creates after ${WARMUP} to warm up, ${CONCURRENCY} keep-alive clients, 5 properties (1 unique, 2 indexed), versioning on`,
      '  A: auth + data alone (as bench/records); A2: the same two as `npm start` runs them (flags, log level, sed pipes);',
      '  B: every process of scripts/services.list as `npm start` runs it',
      line({ ...a.run, label: 'A data service alone, direct' }),
      line({ ...a2, label: 'A2 auth + data as npm start' }),
      line({ ...viaGateway, label: 'B whole platform, through gateway' }),
      line({ ...direct, label: 'B whole platform, direct to data' }),
      `  ratio B through gateway / A: ${(viaGateway.m.perSecond / a.run.m.perSecond).toFixed(2)} (target >= 0.7); B direct / A: ${(direct.m.perSecond / a.run.m.perSecond).toFixed(2)}`,
      ...cpuTable([a.run, a2, viaGateway, direct]),
      ...a.reads,
      ...b.reads,
      '',
    ].join('\n'),
  );
}

await main();

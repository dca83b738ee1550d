import { afterAll, describe, expect, it } from '@jest/globals';
import { recordingBridge, runJob } from '../test/support.js';
import { MISSING_RUN_MESSAGE } from './code-check.js';
import { createIsolatedVmEngine, SEARCH_RECORDS_MESSAGE } from './isolated-vm-engine.js';
import { BRIDGED_API_METHODS, type EndpointRequest, type SandboxJob } from './types.js';

// One engine for the behaviour tests; tests that need a pool of their own make one.
const engine = createIsolatedVmEngine({ isolates: 2, maxRunsPerIsolate: 50 });
afterAll(() => engine.close());

const run = (code: string, overrides: Partial<SandboxJob> = {}, bridge = recordingBridge()) =>
  engine.run(runJob(code, overrides), bridge);

describe('kind run', () => {
  it('returns what run() returned, JSON-copied', async () => {
    const result = await run('async function run() { return { success: true, data: { n: 1, d: new Date(0) } }; }');
    expect(result).toMatchObject({
      status: 'succeeded',
      returnValue: { success: true, data: { n: 1, d: '1970-01-01T00:00:00.000Z' } },
      logs: [],
      logsTruncated: false,
    });
    expect(result.error).toBeUndefined();
    expect(result.cpuMs).toBeGreaterThan(0);
    expect(result.wallMs).toBeGreaterThan(0);
  });

  it('reports a returned {success: false} as failed, keeping the returned value', async () => {
    const result = await run("async function run() { return { success: false, error: 'provider said no' }; }");
    expect(result).toMatchObject({
      status: 'failed',
      returnValue: { success: false, error: 'provider said no' },
      error: { name: 'FunctionError', message: 'provider said no' },
    });
  });

  it('succeeds without a return value', async () => {
    const result = await run('async function run() {}');
    expect(result.status).toBe('succeeded');
    expect('returnValue' in result).toBe(false);
  });

  it('reports a throw with the isolate stack and user-code line numbers', async () => {
    const result = await run('const x = 1;\nasync function run() {\n  throw new TypeError("bad input");\n}');
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ name: 'TypeError', message: 'bad input' });
    expect(result.error?.stack).toContain('function.js:3:9');
    expect(result.error?.stack).not.toMatch(/strata:prelude|libs\/sandbox|node:internal|isolated-vm/);
  });

  it('reports a thrown non-error', async () => {
    const result = await run("async function run() { throw 'plain string'; }");
    expect(result).toMatchObject({ status: 'failed', error: { name: 'Error', message: 'plain string' } });
  });

  it('reports top-level throws and syntax errors as failed, with the position in function.js', async () => {
    const thrown = await run('throw new RangeError("at load");\nasync function run() {}');
    expect(thrown).toMatchObject({ status: 'failed', error: { name: 'RangeError', message: 'at load' } });
    expect(thrown.error?.stack ?? '').not.toMatch(/libs\/sandbox|node:internal/);
    const syntax = await run('async function run() {\n  return 1 +;\n}');
    expect(syntax).toMatchObject({ status: 'failed', error: { name: 'SyntaxError' } });
    expect(syntax.error?.message).toContain('function.js:2');
  });

  it('fails code without run(), and the legacy exports forms', async () => {
    expect(await run('function main() {}')).toMatchObject({
      status: 'failed',
      error: { message: MISSING_RUN_MESSAGE },
    });
    expect(await run('exports.handler = async () => 1;')).toMatchObject({
      status: 'failed',
      error: { name: 'ReferenceError' },
    });
    expect(await run('module.exports = async () => 1;')).toMatchObject({ status: 'failed' });
  });

  it('fails a return value that is not JSON', async () => {
    const result = await run('async function run() { return { n: 1n }; }');
    expect(result).toMatchObject({ status: 'failed', error: { name: 'TypeError' } });
    expect(result.error?.message).toMatch(/^The return value is not JSON-serialisable/);
  });

  it('gives triggerParams and executionParams as fresh copies per run', async () => {
    const triggerParams = { secret: 's3cret', nested: { list: [1, 2] } };
    const code = `async function run() {
      const seen = JSON.parse(JSON.stringify({ triggerParams, executionParams }));
      triggerParams.nested.list.push(3);
      executionParams.page = 99;
      return seen;
    }`;
    for (let i = 0; i < 2; i++) {
      const result = await run(code, { triggerParams, executionParams: { page: 1 } });
      expect(result.returnValue).toEqual({ triggerParams, executionParams: { page: 1 } });
    }
    expect(triggerParams.nested.list).toEqual([1, 2]);
  });
});

describe('gate', () => {
  const TOP_LEVEL =
    "api.log('top level'); api.fetchRecord('c', 'r'); async function run() { return { success: true, data: 1 }; }";

  it('runs no user code, top level included, until the gate opens', async () => {
    let open!: (value: boolean) => void;
    const gate = new Promise<boolean>((resolve) => (open = resolve));
    const bridge = recordingBridge();
    let settled = false;
    const running = run(TOP_LEVEL, { gate }, bridge).finally(() => (settled = true));
    // The same code without a gate, started after it on the engine's other isolate: once it has
    // run its top level and ended, the gated one has had the time to, had it not waited.
    expect(await run(TOP_LEVEL)).toMatchObject({ status: 'succeeded' });
    expect(settled).toBe(false);
    expect(bridge.calls).toEqual([]);
    open(true);
    const result = await running;
    expect(result).toMatchObject({ status: 'succeeded', returnValue: { success: true, data: 1 } });
    expect(result.logs.map((l) => l.message)).toEqual(['top level']);
    expect(bridge.calls.map((c) => c.method)).toEqual(['fetchRecord']);
  });

  it('ends the run before any user code when the gate closes (or rejects)', async () => {
    for (const gate of [Promise.resolve(false), Promise.reject(new Error('claim failed'))]) {
      const result = await run(TOP_LEVEL, { gate });
      expect(result).toMatchObject({ status: 'failed', error: { name: 'NotStarted' }, logs: [] });
    }
    const endpoint = await run('api.log("top"); export default async () => "hi";', {
      kind: 'endpoint',
      gate: Promise.resolve(false),
    });
    expect(endpoint).toMatchObject({ status: 'failed', error: { name: 'NotStarted' }, logs: [] });
  });
});

describe('stop', () => {
  it('starts no user code once stopped, and ends a run under way at once, sync loop or await, then serves on', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const before = await run("api.log('top level'); async function run() { return { success: true }; }", {
      stop: stopped.signal,
    });
    expect(before).toMatchObject({ status: 'failed', error: { name: 'NotStarted' }, logs: [] });

    for (const code of [
      'async function run() { api.fetchRecord("c", "r"); for (;;) {} }',
      'async function run() { await api.fetchRecord("c", "r"); await new Promise(() => {}); }',
    ]) {
      const stop = new AbortController();
      // The run's first call says its user code is under way.
      let underWay!: () => void;
      const started = new Promise<void>((resolve) => (underWay = resolve));
      const bridge = {
        call: () => {
          underWay();
          return Promise.resolve(null);
        },
      };
      // Limits far beyond the test's time: only the stop can end these runs.
      const limits = { ...runJob('').limits, cpuMs: 600_000, wallMs: 600_000 };
      const running = engine.run(runJob(code, { stop: stop.signal, limits }), bridge);
      await started;
      stop.abort();
      expect(await running).toMatchObject({ status: 'failed', error: { name: 'Stopped' } });
    }
    expect(await run('async function run() { return { success: true, data: 3 }; }')).toMatchObject({
      status: 'succeeded',
      returnValue: { data: 3 },
    });
  });
});

describe('stop while waiting for an isolate', () => {
  it('ends a run stopped in the queue at once, without an isolate, and the queue moves on', async () => {
    const single = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 50 });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let underWay!: () => void;
      const started = new Promise<void>((resolve) => (underWay = resolve));
      const holding = single.run(
        runJob('async function run() { await api.fetchRecord("c", "r"); return { success: true }; }'),
        {
          call: async () => {
            underWay();
            await held;
            return null;
          },
        },
      );
      await started;
      const stop = new AbortController();
      const starts: string[] = [];
      const waiting = single.run(
        runJob('async function run() { return { success: true }; }', {
          stop: stop.signal,
          onStart: () => starts.push('stopped'),
        }),
        recordingBridge(),
      );
      const behind = single.run(
        runJob('async function run() { return { success: true, data: "behind" }; }', {
          onStart: () => starts.push('behind'),
        }),
        recordingBridge(),
      );
      expect(single.stats().queued).toBe(2);
      stop.abort();
      expect(await waiting).toMatchObject({ status: 'failed', error: { name: 'NotStarted' }, cpuMs: 0 });
      expect(single.stats().queued).toBe(1);
      // Told only once the run has its isolate: not while it waits, never for the one stopped there.
      expect(starts).toEqual([]);
      release();
      expect(await holding).toMatchObject({ status: 'succeeded' });
      expect(await behind).toMatchObject({ status: 'succeeded', returnValue: { data: 'behind' } });
      expect(starts).toEqual(['behind']);
    } finally {
      await single.close();
    }
  });
});

describe('api', () => {
  it('forwards every bridged method to the bridge with JSON-copied arguments', async () => {
    const bridge = recordingBridge();
    const calls = BRIDGED_API_METHODS.map(
      (method) => `await api.${method}('a', { d: new Date(0), u: undefined }, [undefined]);`,
    );
    const result = await run(
      `async function run() { ${calls.join('\n')} return await api.fetchRecord('x', 1); }`,
      {},
      bridge,
    );
    expect(result).toMatchObject({ status: 'succeeded', returnValue: { method: 'fetchRecord', args: ['x', 1] } });
    expect(bridge.calls.map((call) => call.method)).toEqual([...BRIDGED_API_METHODS, 'fetchRecord']);
    expect(bridge.calls[0]?.args).toEqual(['a', { d: '1970-01-01T00:00:00.000Z' }, [null]]);
  });

  it('runs api calls concurrently', async () => {
    const bridge = recordingBridge(async (_method, args) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return args[0] ?? null;
    });
    const result = await run(
      'async function run() { return Promise.all([1, 2, 3].map((n) => api.queryRecords(n))); }',
      {},
      bridge,
    );
    expect(result.returnValue).toEqual([1, 2, 3]);
  });

  it('turns a bridge rejection into an Error inside, with the message and no host stack', async () => {
    const bridge = recordingBridge(() => {
      throw Object.assign(new Error('record not found'), { secretHostDetail: 'do-not-leak' });
    });
    const result = await run(
      `async function run() {
        try { await api.fetchRecord('c', 1); } catch (e) {
          return { isError: e instanceof Error, message: e.message, stack: e.stack, keys: Object.keys(e) };
        }
      }`,
      {},
      bridge,
    );
    expect(result.status).toBe('succeeded');
    const caught = result.returnValue as { isError: boolean; message: string; stack: string; keys: string[] };
    expect(caught).toMatchObject({ isError: true, message: 'record not found', keys: [] });
    expect(caught.stack).not.toMatch(/libs\/sandbox|node:|\.ts:|do-not-leak/);
  });

  it('fails a run whose bridge rejection is not caught', async () => {
    const bridge = recordingBridge(() => Promise.reject(new Error('denied')));
    const result = await run("async function run() { await api.createRecord('c', {}); }", {}, bridge);
    expect(result).toMatchObject({ status: 'failed', error: { name: 'Error', message: 'denied' } });
  });

  it('throws method-not-found for api.searchRecords', async () => {
    const bridge = recordingBridge();
    const result = await run(
      'async function run() { try { await api.searchRecords("c", {}); } catch (e) { return e.message; } }',
      {},
      bridge,
    );
    expect(result.returnValue).toBe(SEARCH_RECORDS_MESSAGE);
    expect(SEARCH_RECORDS_MESSAGE).toMatch(/method not found/);
    expect(bridge.calls).toEqual([]);
  });

  it('keeps api read-only and frozen', async () => {
    const result = await run(`'use strict';
    async function run() {
      const attempts = [];
      try { api.fetchRecord = () => 'mine'; } catch (e) { attempts.push(e.name); }
      try { globalThis.api = {}; } catch (e) { attempts.push(e.name); }
      try { api.log.info = null; } catch (e) { attempts.push(e.name); }
      return { attempts, frozen: Object.isFrozen(api) };
    }`);
    expect(result.returnValue).toEqual({ attempts: ['TypeError', 'TypeError', 'TypeError'], frozen: true });
    // Sloppy code fails silently, but fails all the same.
    const sloppy = await run('async function run() { api.fetchRecord = 1; api = 2; return typeof api.fetchRecord; }');
    expect(sloppy.returnValue).toBe('function');
  });

  it('refuses arguments over the size cap before they reach the bridge', async () => {
    const bridge = recordingBridge();
    const result = await run(
      "async function run() { try { await api.createRecord('c', 'x'.repeat(2 * 1024 * 1024)); } catch (e) { return e.message; } }",
      {},
      bridge,
    );
    expect(result.returnValue).toMatch(/exceed 1048576 bytes/);
    expect(bridge.calls).toEqual([]);
  });

  it('refuses arguments that are not JSON', async () => {
    const result = await run(
      "async function run() { const a = {}; a.a = a; try { await api.createRecord('c', a); } catch (e) { return e.name; } }",
    );
    expect(result.returnValue).toBe('TypeError');
  });

  it('bounds the api calls awaiting the bridge at once', async () => {
    const pool = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 10, maxPendingCalls: 2 });
    try {
      const bridge = recordingBridge(async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return 1;
      });
      const result = await pool.run(
        runJob(`async function run() {
          const settled = await Promise.allSettled([1, 2, 3].map((n) => api.fetchRecord('c', n)));
          return settled.map((s) => s.status === 'fulfilled' ? s.value : s.reason.message);
        }`),
        bridge,
      );
      expect(result.returnValue).toEqual([1, 1, 'api.fetchRecord: too many api calls at once (at most 2)']);
      expect(bridge.calls).toHaveLength(2);
    } finally {
      await pool.close();
    }
  });

  it('aborts the bridge signal when the run ends', async () => {
    const bridge = recordingBridge(() => new Promise(() => undefined));
    const result = await run("async function run() { api.fetchRecord('c', 1); return 'not waiting'; }", {}, bridge);
    expect(result.status).toBe('succeeded');
    expect(bridge.calls[0]?.context.signal.aborted).toBe(true);
  });
});

describe('runs that wait on nothing, and what a run may ask of the host', () => {
  // Looked at after 30 ms of nothing pending, far below the wall clock these runs are given.
  const watched = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 100, idleCheckMs: 30, maxApiCalls: 5 });
  afterAll(() => watched.close());
  const limits = { cpuMs: 5000, wallMs: 60_000 };

  it.each([
    ['a promise that never settles', 'async function run() { await new Promise(() => {}); }'],
    [
      'a promise awaited after an answered call',
      'async function run() { await api.fetchRecord("c", 1); await new Promise(() => {}); }',
    ],
    [
      'a promise awaited after a timer fired',
      'async function run() { await new Promise((r) => setTimeout(r, 5)); await new Promise(() => {}); }',
    ],
    ['a timer that was cleared', 'async function run() { await new Promise((r) => clearTimeout(setTimeout(r, 5))); }'],
  ])('ends %s as NeverSettled long before its wall clock', async (_name, code) => {
    const result = await watched.run(runJob(code, {}, limits), recordingBridge());
    expect(result).toMatchObject({ status: 'failed', error: { name: 'NeverSettled' } });
    expect(result.error?.message).toMatch(/never settled/);
    expect(result.wallMs).toBeLessThan(limits.wallMs);
  });

  it('leaves a run alone while a timer or an api call is pending, or its code is busy', async () => {
    const slowAnswer = recordingBridge(async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return 'late';
    });
    const waited = await watched.run(
      runJob(
        `async function run() {
          await new Promise((r) => setTimeout(r, 150));
          const answer = await api.fetchRecord('c', 1);
          const until = Date.now() + 150; while (Date.now() < until) {}
          return answer;
        }`,
        {},
        limits,
      ),
      slowAnswer,
    );
    expect(waited).toMatchObject({ status: 'succeeded', returnValue: 'late' });
  });

  it('caps the api calls of a run', async () => {
    const result = await watched.run(
      runJob(`async function run() {
        const out = [];
        for (let i = 0; i < 7; i++) {
          try { await api.hmacSha256('k', String(i)); out.push('ok'); } catch (e) { out.push(e.message); }
        }
        return out;
      }`),
      recordingBridge(() => 'mac'),
    );
    expect(result.returnValue).toEqual([
      ...Array(5).fill('ok'),
      'api.hmacSha256: a run makes at most 5 api calls',
      'api.hmacSha256: a run makes at most 5 api calls',
    ]);
  });

  it('counts the host CPU time spent answering calls against the run', async () => {
    // Each call costs the host 40 ms of CPU (a busy bridge) and the isolate next to nothing.
    const busyHost = recordingBridge(() => {
      // CPU time, not wall time: on a busy machine the loop gets the CPU it asks for, however long that takes.
      const start = process.threadCpuUsage();
      for (;;) {
        const spent = process.threadCpuUsage(start);
        if (spent.user + spent.system >= 40_000) break;
      }
      return null;
    });
    const burnt = await watched.run(
      runJob(
        'async function run() { for (let i = 0; i < 5; i++) await api.hmacSha256("k", "v"); }',
        {},
        { cpuMs: 100 },
      ),
      busyHost,
    );
    expect(burnt).toMatchObject({
      status: 'timed_out',
      error: { message: expect.stringMatching(/CPU time limit of 100 ms/) },
    });
    // What a bridge reports itself (work done elsewhere on the run's behalf) is counted too.
    const charged = await watched.run(
      runJob(
        'async function run() { for (let i = 0; i < 5; i++) await api.hmacSha256("k", "v"); }',
        {},
        { cpuMs: 100 },
      ),
      recordingBridge((_method, _args, context) => {
        context.charge?.(30);
        return null;
      }),
    );
    expect(charged.status).toBe('timed_out');
    expect(charged.cpuMs).toBeGreaterThanOrEqual(90);
  });
});

describe('logs', () => {
  it('captures api.log, its levels and console, JSON-stringifying non-strings', async () => {
    const result = await run(`async function run() {
      api.log('plain', 1, { a: [1] }, null, undefined);
      api.log.warn('w'); api.log.error(new Error('e')); api.log.debug('d');
      console.log('c'); console.info('ci'); console.warn('cw'); console.error('ce'); console.debug('cd');
      const cyclic = {}; cyclic.self = cyclic; api.log(cyclic);
    }`);
    expect(result.logs.map(({ level, message }) => [level, message.split('\n')[0]])).toEqual([
      ['info', 'plain 1 {"a":[1]} null undefined'],
      ['warn', 'w'],
      ['error', 'Error: e'],
      ['debug', 'd'],
      ['info', 'c'],
      ['info', 'ci'],
      ['warn', 'cw'],
      ['error', 'ce'],
      ['debug', 'cd'],
      ['info', '[object Object]'],
    ]);
    expect(result.logsTruncated).toBe(false);
    for (const entry of result.logs) expect(entry.at).toBeGreaterThanOrEqual(0);
  });

  it('caps the number of entries', async () => {
    const result = await engine.run(
      runJob(
        'async function run() { for (let i = 0; i < 100; i++) api.log("line " + i); return 1; }',
        {},
        { maxLogEntries: 10 },
      ),
      recordingBridge(),
    );
    expect(result.status).toBe('succeeded');
    expect(result.logs).toHaveLength(10);
    expect(result.logsTruncated).toBe(true);
  });

  it('caps the bytes, multi-byte characters included', async () => {
    const result = await engine.run(
      runJob('async function run() { api.log("€".repeat(100)); api.log("more"); }', {}, { maxLogBytes: 50 }),
      recordingBridge(),
    );
    const bytes = result.logs.reduce((sum, entry) => sum + Buffer.byteLength(entry.message), 0);
    expect(bytes).toBeLessThanOrEqual(50);
    expect(result.logs[0]?.message).toBe('€'.repeat(16));
    expect(result.logsTruncated).toBe(true);
  });

  it('caps a huge log message', async () => {
    const result = await engine.run(
      runJob(
        'async function run() { api.log("x".repeat(20 * 1024 * 1024)); return "done"; }',
        {},
        { maxLogBytes: 1000 },
      ),
      recordingBridge(),
    );
    expect(result).toMatchObject({ status: 'succeeded', returnValue: 'done', logsTruncated: true });
    expect(result.logs[0]?.message).toHaveLength(1000);
  });

  it('survives an endless log loop: timed out, logs capped', async () => {
    const result = await engine.run(
      runJob('async function run() { for (;;) api.log("again"); }', {}, { cpuMs: 200, wallMs: 2000, maxLogEntries: 5 }),
      recordingBridge(),
    );
    expect(result.status).toBe('timed_out');
    expect(result.logs).toHaveLength(5);
    expect(result.logsTruncated).toBe(true);
  });
});

describe('kind endpoint', () => {
  const request: EndpointRequest = {
    method: 'POST',
    path: '/orders',
    query: { page: '2' },
    headers: { 'content-type': 'application/json' },
    payload: { order: 7 },
  };
  const endpoint = (code: string) => engine.run(runJob(code, { kind: 'endpoint', request }), recordingBridge());

  it('passes context.req and takes the response from context.res.json', async () => {
    const result = await endpoint(`export default async (context) => {
      context.res.json({ statusCode: 201, headers: { 'x-order': context.req.payload.order, 'x-flag': true }, body: context.req });
      return 'ignored';
    };`);
    expect(result).toMatchObject({
      status: 'succeeded',
      response: { statusCode: 201, headers: { 'x-order': '7', 'x-flag': 'true' }, body: request },
    });
  });

  it('answers the return value as a 200 body when res.json was not called', async () => {
    const result = await endpoint(
      'const factor = 2;\nexport default async function handler({ req }) { return { doubled: req.payload.order * factor }; }',
    );
    expect(result).toMatchObject({
      status: 'succeeded',
      returnValue: { doubled: 14 },
      response: { statusCode: 200, headers: {}, body: { doubled: 14 } },
    });
  });

  it('fails an invalid res.json call', async () => {
    const result = await endpoint('export default async (context) => { context.res.json({ statusCode: 42 }); };');
    expect(result).toMatchObject({ status: 'failed', error: { name: 'RangeError' } });
  });

  it('fails code without a default function export, and imports', async () => {
    expect(await endpoint('export const x = 1;')).toMatchObject({ status: 'failed' });
    const imported = await endpoint("import fs from 'fs';\nexport default async () => 1;");
    expect(imported).toMatchObject({
      status: 'failed',
      error: { message: expect.stringMatching(/Cannot import 'fs'/) },
    });
  });

  it('reports a throw with the line in function.js', async () => {
    const result = await endpoint('export default async () => {\n\n  null.x;\n};');
    expect(result).toMatchObject({ status: 'failed', error: { name: 'TypeError' } });
    expect(result.error?.stack).toContain('function.js:3:');
  });
});

describe('isolation', () => {
  it('shows user code no host object: the globals are the language builtins plus the documented ones', async () => {
    const result = await run('async function run() { return Object.getOwnPropertyNames(globalThis); }');
    const names = result.returnValue as string[];
    const added = names.filter((name) => !LANGUAGE_GLOBALS.has(name)).sort();
    expect(added).toEqual(['api', 'clearTimeout', 'console', 'executionParams', 'run', 'setTimeout', 'triggerParams']);
    expect(names).not.toEqual(expect.arrayContaining(['WebAssembly']));
    expect(names).not.toEqual(expect.arrayContaining(['SharedArrayBuffer']));
    expect(names).not.toEqual(expect.arrayContaining(['FinalizationRegistry']));
  });

  it('leaves nothing host-side reachable: no $0, no Reference, no process, require, Buffer or fetch', async () => {
    const result = await run(`async function run() {
      const viaConstructor = (() => { try { return typeof ({}).constructor.constructor('return process')(); } catch (e) { return e.name; } })();
      const globalObject = (function () { return this; }).constructor('return this')();
      const values = Object.getOwnPropertyNames(globalObject).map((name) => globalObject[name]);
      const hostish = values.filter((value) => value && /Reference|ExternalCopy|Callback|Isolate/.test(String(value.constructor && value.constructor.name)));
      return {
        viaConstructor,
        types: [typeof $0, typeof $1, typeof process, typeof require, typeof Buffer, typeof fetch, typeof setInterval, typeof ivm, typeof module, typeof exports],
        hostish: hostish.length,
        apiKeys: Object.keys(api).sort(),
      };
    }`);
    expect(result.returnValue).toEqual({
      viaConstructor: 'ReferenceError',
      types: Array(10).fill('undefined'),
      hostish: 0,
      apiKeys: [...BRIDGED_API_METHODS, 'log', 'searchRecords'].sort(),
    });
  });

  it('has no module loader: dynamic import fails', async () => {
    const result = await run(
      "async function run() { try { await import('fs'); return 'imported'; } catch (e) { return e.message; } }",
    );
    expect(result.status).toBe('succeeded');
    expect(result.returnValue).not.toBe('imported');
  });

  it('keeps its own builtins when user code replaces theirs before calling api', async () => {
    const bridge = recordingBridge();
    const result = await run(
      `async function run() {
        JSON.stringify = () => '{"forged":true}';
        JSON.parse = () => ({ forged: true });
        Array.prototype.map = () => { throw new Error('map hijacked'); };
        Array.prototype.join = () => 'joined';
        Function.prototype.apply = () => { throw new Error('apply hijacked'); };
        Function.prototype.call = () => { throw new Error('call hijacked'); };
        Function.prototype.bind = () => { throw new Error('bind hijacked'); };
        Reflect.apply = () => { throw new Error('Reflect.apply hijacked'); };
        Object.defineProperty(Object.prototype, 'result', { get() { return { reference: true }; }, configurable: true });
        Object.defineProperty(Object.prototype, 'arguments', { get() { return { reference: true }; }, configurable: true });
        Object.defineProperty(Object.prototype, 'ok', { set() { throw new Error('setter'); }, get() { return true; }, configurable: true });
        Object.defineProperty(Object.prototype, 'then', { get() { return undefined; }, configurable: true });
        String.prototype.slice = () => 'sliced';
        const value = await api.createRecord('orders', [1, 2]);
        Promise.prototype.then = function () { throw new Error('then hijacked'); };
        api.log('still logging', 3);
        return value;
      }`,
      {},
      bridge,
    );
    // The host got the real arguments, as strings it parsed itself.
    expect(bridge.calls.map(({ method, args }) => ({ method, args }))).toEqual([
      { method: 'createRecord', args: ['orders', [1, 2]] },
    ]);
    // The run's outcome is whatever the user's own broken builtins make of it, but it is reported.
    expect(['succeeded', 'failed']).toContain(result.status);
    expect(result.logs[0]?.message).toBe('still logging 3');

    // And the next run, on the same isolates, has clean builtins.
    const next = await run(`async function run() {
      return [typeof Object.prototype.result, typeof Object.prototype.toJSON, JSON.stringify({ a: [1].map((x) => x + 1) }),
        Promise.prototype.then.toString().includes('[native code]')];
    }`);
    expect(next.returnValue).toEqual(['undefined', 'undefined', '{"a":[2]}', true]);
  });

  it('lets an inherited toJSON shape the values, never the list the host parses', async () => {
    const bridge = recordingBridge();
    const result = await run(
      `async function run() {
        Object.defineProperty(Object.prototype, 'toJSON', { value() { return 'mine'; }, configurable: true, writable: true });
        return await api.createRecord('orders', [1, 2], { a: 1 });
      }`,
      {},
      bridge,
    );
    expect(bridge.calls[0]?.args).toEqual(['orders', 'mine', 'mine']);
    expect(result.status).toBe('succeeded');
  });

  it('gives every run a fresh context: globals and mutated prototypes do not leak to the next run', async () => {
    const single = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 100 });
    try {
      const first = await single.run(
        runJob(`async function run() {
          globalThis.leaked = 'from run 1';
          var leakedVar = 1;
          Array.prototype.evil = true;
          Object.prototype.polluted = true;
          Math.random = () => 4;
          return 'set';
        }`),
        recordingBridge(),
      );
      expect(first.returnValue).toBe('set');
      const second = await single.run(
        runJob(`async function run() {
          return [typeof leaked, typeof leakedVar, [].evil, ({}).polluted, Math.random() === 4];
        }`),
        recordingBridge(),
      );
      expect(second.returnValue).toEqual(['undefined', 'undefined', null, null, false]);
      expect(single.stats().isolatesCreated).toBe(1);
    } finally {
      await single.close();
    }
  });
});

describe('code left behind by a run', () => {
  // One isolate: the next run is sure to land where the last one left its code.
  const single = () => createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 50 });
  const next = 'async function run() { return "next"; }';

  it('never runs on in the next run: an api call answered after the end gives the isolate up', async () => {
    const pool = single();
    try {
      // The bridge answers once the run has ended (its signal aborts): the continuation would loop there.
      const late = recordingBridge(
        (_method, _args, context) =>
          new Promise((resolve) => context.signal.addEventListener('abort', () => resolve(null))),
      );
      const stray = await pool.run(
        runJob(
          'async function run() { api.fetchRecord("c", "x").then(() => { for (;;) {} }); return 1; }',
          {},
          { cpuMs: 300 },
        ),
        late,
      );
      // The answer reaches the isolate before the end's probe (the loop ends under the run's own CPU limit)
      // or after it (the isolate is disposed with the loop): which one depends on the machine's timing.
      expect(['succeeded', 'timed_out']).toContain(stray.status);
      const after = await pool.run(runJob(next, {}, { cpuMs: 300 }), recordingBridge());
      expect(after).toMatchObject({ status: 'succeeded', returnValue: 'next' });
      expect(pool.stats().isolatesRetired.killed).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('keeps the limits on until the isolate has taken what was handed to it before the end', async () => {
    const pool = single();
    try {
      // Answered at once and not awaited: the loop starts before or just after the end, never in the next run.
      for (let i = 0; i < 5; i++) {
        const stray = await pool.run(
          runJob(
            'async function run() { api.fetchRecord("c", "x").then(() => { for (;;) {} }); return 1; }',
            {},
            { cpuMs: 200 },
          ),
          recordingBridge(() => null),
        );
        expect(['succeeded', 'timed_out']).toContain(stray.status);
        const after = await pool.run(runJob(next, {}, { cpuMs: 200 }), recordingBridge());
        expect(after).toMatchObject({ status: 'succeeded', returnValue: 'next' });
      }
    } finally {
      await pool.close();
    }
  });

  it('cannot leave a cleanup callback for a later garbage collection', async () => {
    const pool = single();
    try {
      // Targets that die during the run: V8 would call the callback after a collection, in whatever run comes next.
      const planted = await pool.run(
        runJob(
          `async function run() {
            const Registry = globalThis.FinalizationRegistry ?? (function () {}).constructor('return FinalizationRegistry')();
            const registry = new Registry(() => { for (;;) {} });
            for (let i = 0; i < 10000; i++) registry.register({ held: new Array(100).fill(i) }, i);
            globalThis.keep = registry;
            let junk = [];
            for (let i = 0; i < 300000; i++) { junk.push({ i }); if (junk.length > 50000) junk = []; }
            return 'planted';
          }`,
          {},
          { cpuMs: 300 },
        ),
        recordingBridge(),
      );
      expect(planted).toMatchObject({ status: 'failed', error: { name: 'ReferenceError' } });
      for (let i = 0; i < 5; i++) {
        const after = await pool.run(
          runJob(
            'async function run() { const a = []; for (let i = 0; i < 20000; i++) a.push({ i }); return a.length; }',
            {},
            { cpuMs: 300 },
          ),
          recordingBridge(),
        );
        expect(after).toMatchObject({ status: 'succeeded', returnValue: 20000 });
      }
    } finally {
      await pool.close();
    }
  });

  it('keeps the isolate of a run whose calls were all answered and taken', async () => {
    const pool = single();
    try {
      const done = await pool.run(
        runJob('async function run() { return await api.fetchRecord("c", "x"); }'),
        recordingBridge(() => 7),
      );
      expect(done).toMatchObject({ status: 'succeeded', returnValue: 7 });
      await pool.run(runJob(next), recordingBridge());
      expect(pool.stats()).toMatchObject({ isolatesCreated: 1, isolatesRetired: { killed: 0 } });
    } finally {
      await pool.close();
    }
  });
});

describe('timers', () => {
  it('fires setTimeout inside the run and honours clearTimeout', async () => {
    const result = await run(`async function run() {
      const order = [];
      const cleared = setTimeout(() => order.push('cleared'), 5);
      clearTimeout(cleared);
      await new Promise((resolve) => setTimeout((a, b) => { order.push(a + b); resolve(); }, 10, 'x', 'y'));
      setTimeout(() => order.push('zero'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      return order;
    }`);
    expect(result.returnValue).toEqual(['xy', 'zero']);
  });

  it('cancels pending timers when the run ends', async () => {
    const single = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 100 });
    try {
      const first = await single.run(
        runJob('async function run() { setTimeout(() => api.log("late"), 30); return 1; }'),
        recordingBridge(),
      );
      await new Promise((resolve) => setTimeout(resolve, 60));
      const second = await single.run(
        runJob('async function run() { await new Promise((r) => setTimeout(r, 60)); return 2; }'),
        recordingBridge(),
      );
      expect(first.logs).toEqual([]);
      expect(second.logs).toEqual([]);
      expect(second.returnValue).toBe(2);
    } finally {
      await single.close();
    }
  });

  it('never lets a timer outlive the wall-clock limit', async () => {
    const result = await engine.run(
      runJob(
        'async function run() { await new Promise((r) => setTimeout(r, 60_000)); return 1; }',
        {},
        { wallMs: 300 },
      ),
      recordingBridge(),
    );
    expect(result.status).toBe('timed_out');
  });

  it('refuses string callbacks and too many timers', async () => {
    const result = await run(`async function run() {
      const errors = [];
      try { setTimeout('api.log(1)', 1); } catch (e) { errors.push(e.name); }
      try { for (let i = 0; i < 1000; i++) setTimeout(() => {}, 10); } catch (e) { errors.push(e.name); }
      return errors;
    }`);
    expect(result.returnValue).toEqual(['TypeError', 'RangeError']);
  });
});

describe('limits', () => {
  const abuse = (code: string, limits: Partial<SandboxJob['limits']>) =>
    engine.run(runJob(code, {}, limits), recordingBridge());

  it.each([
    ['an endless synchronous loop', 'async function run() { for (;;) {} }'],
    ['an endless loop at load time', 'for (;;) {}\nasync function run() {}'],
    ['an endless microtask loop', 'async function run() { for (;;) await null; }'],
    ['an endless loop after a bridge call', 'async function run() { await api.fetchRecord("c", 1); for (;;) {} }'],
    [
      'an endless loop in a timer',
      'async function run() { await new Promise(() => setTimeout(() => { for (;;) {} }, 1)); }',
    ],
  ])('times out %s on CPU time', async (_name, code) => {
    const result = await abuse(code, { cpuMs: 200, wallMs: 5000 });
    expect(result).toMatchObject({ status: 'timed_out', error: { name: 'TimeoutError' } });
    expect(result.error?.message).toMatch(/CPU time limit of 200 ms/);
  });

  it.each([
    ['a promise that never settles', 'async function run() { await new Promise(() => {}); }'],
    ['a bridge call that never answers', 'async function run() { await api.fetchRecord("c", 1); }'],
  ])('times out %s on the wall clock', async (_name, code) => {
    const bridge = recordingBridge(() => new Promise(() => undefined));
    const result = await engine.run(runJob(code, {}, { cpuMs: 200, wallMs: 300 }), bridge);
    expect(result).toMatchObject({ status: 'timed_out', error: { name: 'TimeoutError' } });
    expect(result.error?.message).toMatch(/wall-clock limit of 300 ms/);
    for (const call of bridge.calls) expect(call.context.signal.aborted).toBe(true);
  });

  it('fails deep recursion with the RangeError', async () => {
    const result = await abuse('async function run() { const f = (n) => f(n + 1) + 1; return f(0); }', {
      cpuMs: 5000,
      wallMs: 10_000,
    });
    expect(result).toMatchObject({
      status: 'failed',
      error: { name: 'RangeError', message: 'Maximum call stack size exceeded' },
    });
  });

  it.each([
    ['objects', 'async function run() { const a = []; for (;;) a.push({ n: Math.random() }); }'],
    ['arrays', 'async function run() { const a = []; for (;;) a.push(new Array(100000).fill(0.5)); }'],
    [
      'strings kept alive',
      'async function run() { const a = []; for (let i = 0; ; i++) a.push("x".repeat(1000) + i); }',
    ],
  ])('reports a memory bomb of %s as memory_exceeded and replaces the isolate', async (_name, code) => {
    const before = engine.stats().isolatesRetired.killed;
    const result = await abuse(code, { memoryMb: 16, cpuMs: 20_000, wallMs: 30_000 });
    expect(result).toMatchObject({ status: 'memory_exceeded', error: { name: 'MemoryLimitError' } });
    expect(result.memoryUsageBytes).toBe(16 * 1024 * 1024);
    expect(engine.stats().isolatesRetired.killed).toBe(before + 1);
  });

  it('reports an uncaught ArrayBuffer allocation failure (memory outside the heap) as memory_exceeded', async () => {
    const result = await abuse('async function run() { const a = []; for (;;) a.push(new ArrayBuffer(1e6)); }', {
      memoryMb: 16,
      cpuMs: 20_000,
      wallMs: 30_000,
    });
    expect(result).toMatchObject({ status: 'memory_exceeded', error: { name: 'MemoryLimitError' } });
  });

  it('fails a return value over maxOutputBytes with a clear message', async () => {
    const ascii = await abuse('async function run() { return "x".repeat(2000); }', { maxOutputBytes: 1000 });
    expect(ascii).toMatchObject({
      status: 'failed',
      error: { name: 'RangeError', message: 'The return value is larger than the output limit of 1000 bytes' },
    });
    expect(ascii.returnValue).toBeUndefined();
    // 400 characters pass the isolate's character count; their 1200 UTF-8 bytes do not pass the host's.
    const multiByte = await abuse('async function run() { return "€".repeat(400); }', { maxOutputBytes: 1000 });
    expect(multiByte).toMatchObject({ status: 'failed', error: { name: 'RangeError' } });
  });

  it('keeps serving normal runs after every kind of abuse', async () => {
    const results = await Promise.all([1, 2, 3, 4].map((n) => run(`async function run() { return ${n}; }`)));
    expect(results.map((result) => result.returnValue)).toEqual([1, 2, 3, 4]);
  });

  it('measures memory and CPU per run', async () => {
    const result = await run(
      'async function run() { globalThis.keep = Array.from({ length: 200000 }, (_, i) => ({ i })); let s = 0; for (let i = 0; i < 1e6; i++) s += i; return s; }',
    );
    expect(result.status).toBe('succeeded');
    expect(result.memoryUsageBytes).toBeGreaterThan(1024 * 1024);
    expect(result.cpuMs).toBeGreaterThan(0);
  });

  it('rejects invalid limits', async () => {
    await expect(engine.run(runJob('async function run() {}', {}, { memoryMb: 4 }), recordingBridge())).rejects.toThrow(
      /memoryMb/,
    );
    await expect(
      engine.run(runJob('async function run() {}', {}, { cpuMs: Number.NaN }), recordingBridge()),
    ).rejects.toThrow(/cpuMs/);
  });
});

describe('pool', () => {
  // Recycling is what is tested (about ten isolates replaced), not speed: fewer runs and a long
  // deadline keep it true on a busy machine (it once took over 60 s under a full CI load).
  it('serves a thousand runs, recycling isolates, without a leak or a crash', async () => {
    const pool = createIsolatedVmEngine({ isolates: 2, maxRunsPerIsolate: 120 });
    try {
      const bridge = recordingBridge(() => 1);
      const job = runJob(
        'async function run() { const n = await api.fetchRecord("c", executionParams.i); return executionParams.i + n; }',
      );
      const total = 1200;
      let next = 0;
      let wrong = 0;
      const worker = async () => {
        while (next < total) {
          const i = next++;
          const result = await pool.run({ ...job, executionParams: { i } }, bridge);
          if (result.status !== 'succeeded' || result.returnValue !== i + 1) wrong++;
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      expect(wrong).toBe(0);
      const stats = pool.stats();
      expect(stats.runs).toBe(total);
      expect(stats.isolates).toBeLessThanOrEqual(2);
      expect(stats.isolatesRetired.killed).toBe(0);
      expect(stats.isolatesRetired.runs + stats.isolatesRetired.heap).toBeGreaterThanOrEqual(total / 120 - 2);
      expect(stats.isolatesCreated).toBe(stats.isolates + stats.isolatesRetired.runs + stats.isolatesRetired.heap);
    } finally {
      await pool.close();
    }
  }, 180_000);

  it('answers tryRun with undefined when every isolate is busy, and counts available slots', async () => {
    const pool = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 10 });
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const bridge = recordingBridge(async () => {
        await gate;
        return null;
      });
      expect(pool.available()).toBe(1);
      const first = pool.tryRun(
        runJob('async function run() { await api.fetchRecord("c", 1); return "first"; }'),
        bridge,
      );
      expect(first).toBeDefined();
      expect(pool.available()).toBe(0);
      expect(pool.tryRun(runJob('async function run() {}'), bridge)).toBeUndefined();
      const queued = pool.run(runJob('async function run() { return "queued"; }'), bridge);
      expect(pool.stats().queued).toBe(1);
      release();
      expect((await first)?.returnValue).toBe('first');
      expect((await queued).returnValue).toBe('queued');
      expect(pool.available()).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('runs a reserved job on the isolate it held, before runs that queued after the reservation', async () => {
    const pool = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 50 });
    try {
      const order: string[] = [];
      const reservation = pool.tryReserve()!;
      expect(pool.available()).toBe(0);
      expect(pool.tryReserve()).toBeUndefined();
      expect(pool.tryRun(runJob('async function run() {}'), recordingBridge())).toBeUndefined();
      const queued = pool
        .run(runJob('async function run() { return "queued"; }'), recordingBridge())
        .then((result) => order.push(JSON.stringify(result.returnValue)));
      const reserved = reservation
        .run(runJob('async function run() { return "reserved"; }'), recordingBridge())
        .then((result) => order.push(JSON.stringify(result.returnValue)));
      await Promise.all([queued, reserved]);
      expect(order).toEqual(['"reserved"', '"queued"']);
      await expect(reservation.run(runJob('async function run() {}'), recordingBridge())).rejects.toThrow(
        /already used/,
      );
      // Given back unused, the isolate serves the next run at once.
      const unused = pool.tryReserve()!;
      unused.release();
      expect(pool.available()).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('refuses runs beyond the queue bound, and after close', async () => {
    const pool = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 10, maxQueue: 1 });
    const slow = runJob('async function run() { await new Promise((r) => setTimeout(r, 50)); return 1; }');
    const running = pool.run(slow, recordingBridge());
    const waiting = pool.run(slow, recordingBridge());
    await expect(pool.run(slow, recordingBridge())).rejects.toMatchObject({ name: 'SandboxBusyError' });
    const closing = pool.close();
    await expect(pool.run(slow, recordingBridge())).rejects.toMatchObject({ name: 'SandboxBusyError' });
    expect((await running).status).toBe('succeeded');
    await expect(waiting).rejects.toMatchObject({ name: 'SandboxBusyError' });
    await closing;
    expect(pool.stats().isolates).toBe(0);
  });

  it('serves runs with different memory limits from the same slots', async () => {
    const pool = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 10 });
    try {
      for (const memoryMb of [16, 32, 32, 16]) {
        const result = await pool.run(
          runJob('async function run() { return 1; }', {}, { memoryMb }),
          recordingBridge(),
        );
        expect(result.status).toBe('succeeded');
      }
      expect(pool.stats()).toMatchObject({ isolates: 1, isolatesCreated: 3, isolatesRetired: { limitChange: 2 } });
    } finally {
      await pool.close();
    }
  });

  it('retires an isolate whose heap passes the ratio', async () => {
    const pool = createIsolatedVmEngine({ isolates: 1, maxRunsPerIsolate: 100, maxHeapRatio: 0.1 });
    try {
      const result = await pool.run(
        runJob(
          'async function run() { globalThis.keep = "x".repeat(4 * 1024 * 1024).split(""); return 1; }',
          {},
          { memoryMb: 64 },
        ),
        recordingBridge(),
      );
      expect(result.status).toBe('succeeded');
      expect(pool.stats().isolatesRetired.heap).toBe(1);
    } finally {
      await pool.close();
    }
  });
});

/** ECMAScript's global object (with Annex B and ECMA-402), as V8 has it; a new host global fails the test. */
const LANGUAGE_GLOBALS = new Set([
  ...['globalThis', 'Infinity', 'NaN', 'undefined', 'eval', 'isFinite', 'isNaN', 'parseFloat', 'parseInt'],
  ...['decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape'],
  ...['Object', 'Function', 'Array', 'Number', 'Boolean', 'String', 'Symbol', 'BigInt', 'Date', 'RegExp', 'Promise'],
  ...['Error', 'AggregateError', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError', 'TypeError', 'URIError'],
  ...['SuppressedError', 'DisposableStack', 'AsyncDisposableStack', 'Iterator'],
  ...['JSON', 'Math', 'Intl', 'Reflect', 'Proxy', 'Atomics', 'Map', 'Set', 'WeakMap', 'WeakSet', 'WeakRef'],
  ...['FinalizationRegistry', 'ArrayBuffer', 'DataView', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array'],
  ...['Uint16Array', 'Int32Array', 'Uint32Array', 'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array'],
  ...['BigUint64Array', 'SharedArrayBuffer', 'WebAssembly'],
]);

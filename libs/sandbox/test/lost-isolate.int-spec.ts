import { execFile } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from '@jest/globals';

/** The built engine (npm test builds before Jest runs): the script below runs in plain Node. */
const ENGINE = pathToFileURL(path.join(import.meta.dirname, '..', 'dist', 'isolated-vm.js')).href;

/**
 * Runs a memory bomb that makes isolated-vm lose its isolate (an object given keys without end:
 * V8 runs out of memory where the heap limit cannot stop it), waits past the moment isolated-vm
 * reports the same isolate again ("Script failed to terminate", the run's timeout plus 5 s), prints
 * what the engine reported as one JSON line, and ends by SIGKILL (the lost thread keeps any other
 * exit waiting for good, which is also why this runs in a process of its own).
 */
const SCRIPT = `
import { createIsolatedVmEngine } from ${JSON.stringify(ENGINE)};
const BOMB = 'async function run() { const o = {}; for (let i = 0; ; i++) o["k" + i] = i; }';
const limits = { memoryMb: 16, cpuMs: 1500, wallMs: 2500, maxLogBytes: 1024, maxLogEntries: 10, maxOutputBytes: 1024 };
let catastrophic = [];
const errors = [];
let lostReports = () => 0;
// A bomb that ends at a limit without losing its isolate is tried again on a new engine. Each
// attempt counts its own reports: on a loaded machine an earlier attempt's isolate, ended at the
// CPU limit, can still be reported lost later, which is that attempt's, not this one's.
for (let attempt = 1; attempt <= 5 && catastrophic.length === 0; attempt++) {
  const reports = [];
  let told = 0;
  const engine = createIsolatedVmEngine({
    isolates: 1,
    maxRunsPerIsolate: 100,
    onCatastrophicError: (message) => reports.push(message),
  });
  const job = { kind: 'run', code: BOMB, triggerParams: null, executionParams: null, limits, onIsolateLost: () => told++ };
  lostReports = () => told;
  const result = await engine.run(job, { call: async () => null });
  errors.push(result.error?.name ?? 'none');
  catastrophic = reports;
  if (catastrophic.length === 0) await engine.close();
}
setTimeout(() => {
  process.stdout.write(JSON.stringify({ lostReports: lostReports(), catastrophic, errors }) + '\\n', () => process.kill(process.pid, 'SIGKILL'));
}, 8000);
`;

interface Report {
  lostReports: number;
  catastrophic: string[];
  errors: string[];
}

function loseAnIsolate(): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--no-node-snapshot', '--input-type=module', '--eval', SCRIPT],
      { timeout: 60_000 },
      (err, stdout, stderr) => {
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (!line) reject(new Error(`no report (${err?.message ?? 'exited'}):\n${stdout}\n${stderr.slice(-2000)}`));
        else resolve(JSON.parse(line) as Report);
      },
    );
  });
}

describe('an isolate lost to a memory bomb', () => {
  it('is reported once, though isolated-vm reports it again when the run’s timeout passes', async () => {
    const report = await loseAnIsolate();
    // The run that lost it ends as out of memory; the loss reaches its job and the engine's owner once.
    expect(report.errors.at(-1)).toBe('MemoryLimitError');
    expect(report.catastrophic).toEqual(['Catastrophic out-of-memory error']);
    expect(report.lostReports).toBe(1);
  }, 90_000);
});

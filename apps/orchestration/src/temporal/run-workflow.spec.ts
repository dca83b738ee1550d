import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { bundleWorkflowCode } from '@temporalio/worker';

// The built workflow (the worker bundles dist/, as a deployment does); the test suite builds first.
const APP = fileURLToPath(new URL('../..', import.meta.url));
const WORKFLOW = join(APP, 'dist/temporal/run-workflow.js');
const quiet = { logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } };

describe('the run workflow bundle', () => {
  const scratch: string[] = [];
  afterAll(async () => {
    for (const dir of scratch) await rm(dir, { recursive: true, force: true });
  });

  it('bundles: the workflow imports nothing non-deterministic, and the activities as types only', async () => {
    const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOW, ...quiet });
    expect(bundle.code).toContain('orchestrationRun');
    // The interpreter is in the bundle; the activities' module (Nest, TypeORM, NATS) is not.
    expect(bundle.code).toContain('afterCompute');
    for (const absent of ['@nestjs/common', 'typeorm', '@nats-io', 'RunActivities', '@strata/db']) {
      expect(bundle.code).not.toContain(absent);
    }
  }, 120_000);

  it('refuses a workflow that imports a non-deterministic module (the check above can fail)', async () => {
    const dir = await mkdtemp(join(APP, '.bundle-check-'));
    scratch.push(dir);
    const path = join(dir, 'reads-files.js');
    await writeFile(
      path,
      "import { readFileSync } from 'node:fs';\nexport async function readsFiles() { return readFileSync('/etc/hostname', 'utf8'); }\n",
    );
    await expect(bundleWorkflowCode({ workflowsPath: path, ...quiet })).rejects.toThrow(/Webpack finished with errors/);
  }, 120_000);
});

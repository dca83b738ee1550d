import { withServiceDataSource } from '@strata/db';
import { keyRingOf, type KeyRingSettings } from '../config/key-ring.config.js';
import { describeReencryption, type ReencryptionOptions, type ReencryptionReport } from './reencryption.js';

/**
 * Work an upgrade needs beyond SQL (the key ring, say), which a migration
 * cannot do: the migration marks the step due (a row named after it in the
 * schema's `upgrade_steps` table), and the service's `upgrade` command runs
 * every due step once the release's processes serve (`npm start` before it
 * starts them; the Helm chart's post-install/post-upgrade Job), forgetting
 * each step once it is done (docs/runbooks.md, "Upgrade steps").
 */
export interface UpgradeStep {
  readonly name: string;
  /** Does the work; whether it is done (false: it stays due, and the next `upgrade` runs it again). */
  run(report: (line: string) => void): Promise<boolean>;
}

/** The step that re-seals every envelope under its purpose's binding (docs/architecture.md, "Sealed values"). */
export const RESEAL_BINDINGS_STEP = 'reseal-purpose-bindings';

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** What `upgrade` did: the steps it finished, and those still due. */
export interface UpgradeOutcome {
  readonly done: readonly string[];
  readonly due: readonly string[];
}

/**
 * Runs the due steps of a service's schema in the order of `steps` and forgets
 * those that finish. A due step this release does not know (written by a newer
 * one) is reported and left. Safe beside running replicas and another run:
 * each step is (re-encryption works in locked batches, and doing it twice
 * does nothing more).
 */
export async function runUpgradeSteps(
  source: { readonly url: string; readonly schema: string },
  steps: readonly UpgradeStep[],
  report: (line: string) => void,
): Promise<UpgradeOutcome> {
  if (!IDENTIFIER.test(source.schema)) throw new Error(`invalid schema name ${source.schema}`);
  const table = `${source.schema}.upgrade_steps`;
  const db = { url: source.url, schema: source.schema, entities: [], migrations: [] };
  const due = await withServiceDataSource(db, async (ds) =>
    (await ds.query<{ name: string }[]>(`SELECT name FROM ${table} ORDER BY name`)).map((r) => r.name),
  );
  for (const name of due) {
    if (!steps.some((s) => s.name === name)) report(`${name}: due, but not a step of this release (left as it is)`);
  }
  const done: string[] = [];
  for (const step of steps.filter((s) => due.includes(s.name))) {
    if (await step.run(report)) {
      await withServiceDataSource(db, (ds) => ds.query(`DELETE FROM ${table} WHERE name = $1`, [step.name]));
      done.push(step.name);
      report(`${step.name}: done`);
    } else {
      report(`${step.name}: not finished; it stays due (run upgrade again)`);
    }
  }
  return { done, due: due.filter((name) => !done.includes(name)) };
}

/**
 * The step that moves every envelope a service holds under its purpose's
 * binding (and the active key): the service's re-encryption job, with every
 * envelope opened in the count after it, so that one still bound the old way
 * keeps the step due. Done when nothing is left and nothing is unreadable.
 */
export function resealBindingsStep(
  config: KeyRingSettings,
  reencrypt: (options: ReencryptionOptions) => Promise<ReencryptionReport[]>,
): UpgradeStep {
  const ring = keyRingOf(config);
  return {
    name: RESEAL_BINDINGS_STEP,
    async run(report) {
      const reports = await reencrypt({ verify: true });
      for (const r of reports) report(`${RESEAL_BINDINGS_STEP}: ${describeReencryption(r, ring.activeVersion)}`);
      return reports.every((r) => r.remaining === 0 && r.unreadable.length === 0);
    },
  };
}

/**
 * The `upgrade` command of a service: its due upgrade steps, each line printed
 * with the service's name. Exits 0 when a step is left due (the next `upgrade`,
 * or `reencrypt`, finishes it: docs/runbooks.md); a failure (the database
 * unreachable) throws.
 */
export async function upgradeCommand(
  service: string,
  source: { readonly url: string; readonly schema: string },
  steps: readonly UpgradeStep[],
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<UpgradeOutcome> {
  const outcome = await runUpgradeSteps(source, steps, (line) => write(`${service}: ${line}`));
  if (outcome.done.length === 0 && outcome.due.length === 0) write(`${service}: no upgrade step is due`);
  return outcome;
}

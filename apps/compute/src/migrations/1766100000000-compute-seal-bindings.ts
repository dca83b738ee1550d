import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sealed values move to one binding per purpose (docs/architecture.md, "Sealed
 * values"). Earlier releases sealed a trigger's signing secret as if it were a
 * parameter named `#signingSecret`, so an encrypted parameter of that name,
 * pasted from the secret's envelope, opened to the secret in the function's
 * `triggerParams`: every such parameter (of triggers, their versions and trigger
 * drafts) is removed here; the API now refuses parameter names starting with `#`.
 *
 * Re-sealing the envelopes needs the key ring, which a migration does not
 * have: this marks the `upgrade` command's step due (`upgrade_steps`), which
 * `npm start` and the Helm chart's post-upgrade Job run (docs/runbooks.md,
 * "Upgrade steps"). Until it has run, values are read under either binding.
 *
 * `down` drops the table; the removed parameters cannot be brought back.
 */
export class ComputeSealBindings1766100000000 implements MigrationInterface {
  name = 'ComputeSealBindings1766100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE compute.upgrade_steps (
      name text PRIMARY KEY,
      due_since timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`INSERT INTO compute.upgrade_steps (name) VALUES ('reseal-purpose-bindings')`);
    for (const table of ['compute.triggers', 'compute.trigger_versions']) {
      await q.query(
        `UPDATE ${table} SET metadata = metadata #- ARRAY['params', $1]
          WHERE jsonb_typeof(metadata->'params') = 'object' AND metadata->'params' ? $1`,
        ['#signingSecret'],
      );
    }
    await q.query(
      `UPDATE compute.drafts SET data = data #- ARRAY['triggerMetadata', 'params', $1]
        WHERE jsonb_typeof(data->'triggerMetadata'->'params') = 'object' AND data->'triggerMetadata'->'params' ? $1`,
      ['#signingSecret'],
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE compute.upgrade_steps');
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sealed values move to one binding per purpose (docs/architecture.md, "Sealed
 * values"): here the subscription secrets (current and previous). Re-sealing them needs the key ring, which a
 * migration does not have: this marks the `upgrade` command's step due
 * (`upgrade_steps`), which `npm start` and the Helm chart's post-upgrade Job run
 * (docs/runbooks.md, "Upgrade steps"). Until it has run, values are read under
 * either binding.
 */
export class WebhooksSealBindings1766100000004 implements MigrationInterface {
  name = 'WebhooksSealBindings1766100000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhooks.upgrade_steps (
      name text PRIMARY KEY,
      due_since timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`INSERT INTO webhooks.upgrade_steps (name) VALUES ('reseal-purpose-bindings')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE webhooks.upgrade_steps');
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** `POST {orch_base}/webhooks/{path}` names one orchestration: http-trigger paths are unique per workspace. */
export class WebhookPaths1765100000003 implements MigrationInterface {
  name = 'WebhookPaths1765100000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE UNIQUE INDEX orchestrations_webhook_path_key ON orchestration.orchestrations (workspace_slug, (trigger->>'path'))
        WHERE trigger->>'type' = 'http-trigger'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX orchestration.orchestrations_webhook_path_key');
  }
}

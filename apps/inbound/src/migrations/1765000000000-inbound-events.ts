import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * inbound.inbound_events: every captured http-trigger arrival. The body and the
 * headers are sealed with the key ring (bound to the arrival); the rest is what
 * lists filter on.
 */
export class InboundEvents1765000000000 implements MigrationInterface {
  name = 'InboundEvents1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE inbound.inbound_events (
      id text PRIMARY KEY,
      workspace_slug text NOT NULL,
      trigger_id uuid NOT NULL,
      function_id uuid,
      source_name text NOT NULL,
      signature_result text NOT NULL CHECK (signature_result IN ('verified', 'rejected', 'unsigned')),
      signature_scheme text,
      dispatch_status text NOT NULL CHECK (dispatch_status IN ('received', 'queued', 'dispatched', 'dropped_dispatch')),
      dispatch_error text,
      correlation_id text NOT NULL,
      replayed_from text,
      payload text NOT NULL,
      headers text NOT NULL,
      key_version integer NOT NULL,
      content_type text,
      body_bytes integer NOT NULL,
      run_id uuid,
      job_id uuid,
      received_at timestamptz NOT NULL,
      dispatched_at timestamptz
    )`);
    await q.query(
      'CREATE INDEX inbound_events_list_idx ON inbound.inbound_events (workspace_slug, received_at DESC, id DESC)',
    );
    await q.query(
      'CREATE INDEX inbound_events_trigger_idx ON inbound.inbound_events (workspace_slug, trigger_id, received_at DESC)',
    );
    await q.query(
      `CREATE INDEX inbound_events_received_idx ON inbound.inbound_events (received_at)
        WHERE dispatch_status = 'received'`,
    );
    await q.query('CREATE INDEX inbound_events_retention_idx ON inbound.inbound_events (received_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE inbound.inbound_events');
  }
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

export const SIGNATURE_RESULTS = ['verified', 'rejected', 'unsigned'] as const;
export type SignatureResult = (typeof SIGNATURE_RESULTS)[number];

export const PERSIST_STATUSES = ['pending', 'attempted', 'succeeded', 'failed', 'skipped'] as const;
export type PersistStatus = (typeof PERSIST_STATUSES)[number];

export const DISPATCH_STATUSES = ['received', 'queued', 'dispatched', 'dropped_dispatch'] as const;
export type DispatchStatus = (typeof DISPATCH_STATUSES)[number];

/** inbound.inbound_events: one captured arrival of an http-trigger (body and headers sealed). */
@Entity({ schema: 'inbound', name: 'inbound_events' })
export class InboundEventEntity {
  /** `ievt_` and a sortable id. */
  @PrimaryColumn('text')
  id!: string;

  @Column({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  @Column({ name: 'trigger_id', type: 'uuid' })
  triggerId!: string;

  @Column({ name: 'function_id', type: 'uuid', nullable: true })
  functionId!: string | null;

  /** The trigger's name when the arrival came. */
  @Column({ name: 'source_name', type: 'text' })
  sourceName!: string;

  @Column({ name: 'signature_result', type: 'text' })
  signatureResult!: SignatureResult;

  /** `standard-webhooks` or `hmac-sha256` when a signature was checked. */
  @Column({ name: 'signature_scheme', type: 'text', nullable: true })
  signatureScheme!: string | null;

  @Column({ name: 'dispatch_status', type: 'text' })
  dispatchStatus!: DispatchStatus;

  /** Why a dispatch was dropped (trigger paused or gone, executions limit). */
  @Column({ name: 'dispatch_error', type: 'text', nullable: true })
  dispatchError!: string | null;

  @Column({ name: 'correlation_id', type: 'text' })
  correlationId!: string;

  @Column({ name: 'replayed_from', type: 'text', nullable: true })
  replayedFrom!: string | null;

  /** The raw body, sealed (AAD: the arrival and "payload"). */
  @Column({ type: 'text' })
  payload!: string;

  /** The request headers as JSON, sealed (AAD: the arrival and "headers"). */
  @Column({ type: 'text' })
  headers!: string;

  @Column({ name: 'key_version', type: 'integer' })
  keyVersion!: number;

  @Column({ name: 'content_type', type: 'text', nullable: true })
  contentType!: string | null;

  @Column({ name: 'body_bytes', type: 'integer' })
  bodyBytes!: number;

  @Column({ name: 'run_id', type: 'uuid', nullable: true })
  runId!: string | null;

  @Column({ name: 'job_id', type: 'uuid', nullable: true })
  jobId!: string | null;

  /** The auto-persist of the arrival (null: the trigger does not auto-persist). */
  @Column({ name: 'persist_status', type: 'text', nullable: true })
  persistStatus!: PersistStatus | null;

  @Column({ name: 'persisted_record_id', type: 'uuid', nullable: true })
  persistedRecordId!: string | null;

  @Column({ name: 'persist_error', type: 'text', nullable: true })
  persistError!: string | null;

  @Column({ name: 'received_at', type: 'timestamptz' })
  receivedAt!: Date;

  @Column({ name: 'dispatched_at', type: 'timestamptz', nullable: true })
  dispatchedAt!: Date | null;

  /**
   * A verified Standard Webhooks arrival's `webhook-id` (its SHA-256 when longer
   * than 200 characters), unique per trigger; null for every other arrival and
   * for replays.
   */
  @Column({ name: 'delivery_id', type: 'text', nullable: true })
  deliveryId!: string | null;
}

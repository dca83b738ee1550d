import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JsonObject } from '../json.js';
import type { RunStatus, ExecutionSource } from './run-status.js';

/**
 * compute.runs: one row per execution, the truth about it (the job queue only
 * carries its id). Parameters are sealed with the key ring; what user code
 * produced (logs, return value, error, API calls) is JSON text.
 */
@Entity({ schema: 'compute', name: 'runs' })
export class RunEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ name: 'job_id', type: 'uuid' })
  jobId!: string;

  @Column({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  @Column({ name: 'function_id', type: 'uuid', nullable: true })
  functionId!: string | null;

  @Column({ name: 'function_version', type: 'integer', nullable: true })
  functionVersion!: number | null;

  @Column({ name: 'function_code_hash', type: 'text' })
  functionCodeHash!: string;

  /** The code of a test run of unsaved code (null when the run names a function version). */
  @Column({ type: 'text', nullable: true })
  code!: string | null;

  @Column({ name: 'trigger_id', type: 'uuid', nullable: true })
  triggerId!: string | null;

  @Column({ name: 'execution_source', type: 'text' })
  executionSource!: ExecutionSource;

  @Column({ type: 'text' })
  status!: RunStatus;

  /** `{triggerParams, executionParams}` sealed with the key ring (AAD: the run id). */
  @Column({ type: 'text' })
  params!: string;

  @Column({ name: 'params_key_version', type: 'integer' })
  paramsKeyVersion!: number;

  @Column({ name: 'execution_context', type: 'jsonb' })
  executionContext!: JsonObject;

  @Column({ type: 'jsonb' })
  limits!: Record<string, number>;

  @Column({ name: 'worker_id', type: 'text', nullable: true })
  workerId!: string | null;

  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt!: Date | null;

  @Column({ type: 'text' })
  logs!: string;

  @Column({ name: 'logs_truncated', type: 'boolean' })
  logsTruncated!: boolean;

  @Column({ name: 'api_calls', type: 'text' })
  apiCalls!: string;

  @Column({ name: 'return_value', type: 'text', nullable: true })
  returnValue!: string | null;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ name: 'memory_usage_bytes', type: 'bigint', nullable: true })
  memoryUsageBytes!: string | null;

  @Column({ name: 'cpu_usage_seconds', type: 'numeric', nullable: true })
  cpuUsageSeconds!: string | null;

  @Column({ name: 'queued_at', type: 'timestamptz' })
  queuedAt!: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;

  @Column({ name: 'original_run_id', type: 'uuid', nullable: true })
  originalRunId!: string | null;

  @Column({ name: 'is_rerun', type: 'boolean' })
  isRerun!: boolean;

  @Column({ name: 'rerun_count', type: 'integer' })
  rerunCount!: number;

  @Column({ name: 'rerun_by', type: 'text', nullable: true })
  rerunBy!: string | null;

  @Column({ name: 'rerun_reason', type: 'text', nullable: true })
  rerunReason!: string | null;

  @Column({ name: 'created_by', type: 'text' })
  createdBy!: string;
}

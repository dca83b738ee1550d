import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JsonObject } from '../json.js';

/** compute.triggers: what starts a function, with its per-type metadata (encrypted parameters sealed). */
@Entity({ schema: 'compute', name: 'triggers' })
export class TriggerEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  /** Null only for the system default trigger (test runs bring their own code). */
  @Column({ name: 'function_id', type: 'uuid', nullable: true })
  functionId!: string | null;

  @Column({ name: 'execution_type', type: 'text' })
  executionType!: string;

  @Column({ type: 'jsonb' })
  metadata!: JsonObject;

  @Column({ type: 'integer' })
  version!: number;

  @Column({ name: 'is_system', type: 'boolean' })
  isSystem!: boolean;

  @Column({ type: 'boolean' })
  paused!: boolean;

  @Column({ name: 'created_by', type: 'text' })
  createdBy!: string;

  @Column({ name: 'updated_by', type: 'text' })
  updatedBy!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;
}

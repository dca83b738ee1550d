import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Step } from '@strata/workflow';
import type { OrchestrationTrigger } from './orchestration-trigger.js';

export const ORCHESTRATION_STATUSES = ['draft', 'active', 'paused'] as const;
export type OrchestrationStatus = (typeof ORCHESTRATION_STATUSES)[number];

/** orchestration.orchestrations: the current definition of an orchestration. */
@Entity({ schema: 'orchestration', name: 'orchestrations' })
export class OrchestrationEntity {
  /** `orch_` and a sortable id. */
  @PrimaryColumn('text')
  id!: string;

  @Column({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  @Column({ type: 'text' })
  slug!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'text' })
  status!: OrchestrationStatus;

  /** 1 on create, one more on every update. */
  @Column({ type: 'integer' })
  version!: number;

  /** Its signing secret, if any, sealed. */
  @Column({ type: 'jsonb' })
  trigger!: OrchestrationTrigger;

  @Column({ type: 'jsonb' })
  steps!: Step[];

  @Column({ name: 'created_by', type: 'text' })
  createdBy!: string;

  @Column({ name: 'updated_by', type: 'text' })
  updatedBy!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

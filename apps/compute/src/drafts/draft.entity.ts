import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JsonObject } from '../json.js';

/** compute.drafts: an unpublished function or trigger body. */
@Entity({ schema: 'compute', name: 'drafts' })
export class DraftEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  @Column({ name: 'resource_type', type: 'text' })
  resourceType!: string;

  @Column({ type: 'jsonb' })
  data!: JsonObject;

  @Column({ name: 'created_by', type: 'text' })
  createdBy!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

/** compute.function_versions: every saved state of a function, kept for audit (never updated or deleted). */
@Entity({ schema: 'compute', name: 'function_versions' })
export class FunctionVersionEntity {
  @PrimaryColumn({ name: 'function_id', type: 'uuid' })
  functionId!: string;

  @PrimaryColumn({ type: 'integer' })
  version!: number;

  @Column({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'text' })
  code!: string;

  @Column({ name: 'code_hash', type: 'text' })
  codeHash!: string;

  @Column({ name: 'created_by', type: 'text' })
  createdBy!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';

/** compute.functions: the current version of each function (older ones are in function_versions). */
@Entity({ schema: 'compute', name: 'functions' })
export class FunctionEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'text' })
  code!: string;

  @Column({ type: 'integer' })
  version!: number;

  @Column({ name: 'code_hash', type: 'text' })
  codeHash!: string;

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

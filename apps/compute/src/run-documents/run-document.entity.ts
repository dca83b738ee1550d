import { Column, Entity, PrimaryColumn } from 'typeorm';

/** compute.run_documents: a JSON document a run kept with `api.storeAsJSON`, sealed, until it expires. */
@Entity({ schema: 'compute', name: 'run_documents' })
export class RunDocumentEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ type: 'text' })
  name!: string;

  /** The JSON text sealed with the key ring (AAD: the document id). */
  @Column({ type: 'text' })
  content!: string;

  @Column({ name: 'size_bytes', type: 'integer' })
  sizeBytes!: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;
}

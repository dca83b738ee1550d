import { Column, Entity, PrimaryColumn } from 'typeorm';

/** compute.allowed_domains: where a workspace's functions may send requests. */
@Entity({ schema: 'compute', name: 'allowed_domains' })
export class AllowedDomainEntity {
  @PrimaryColumn({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  /** A host name, or `*.` and a name for every name under it. */
  @PrimaryColumn({ type: 'text' })
  domain!: string;

  @Column({ name: 'created_by', type: 'text' })
  createdBy!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

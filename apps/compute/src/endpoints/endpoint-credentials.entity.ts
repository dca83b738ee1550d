import { Column, Entity, PrimaryColumn } from 'typeorm';

/** compute.endpoint_credentials: an endpoint trigger's API key (hashed) and HMAC signing secret (sealed). */
@Entity({ schema: 'compute', name: 'endpoint_credentials' })
export class EndpointCredentialsEntity {
  @PrimaryColumn({ name: 'trigger_id', type: 'uuid' })
  triggerId!: string;

  @Column({ name: 'workspace_slug', type: 'text' })
  workspaceSlug!: string;

  /** SHA-256 (hex) of the API key; the key itself is shown once and kept nowhere. */
  @Column({ name: 'api_key_hash', type: 'text', nullable: true })
  apiKeyHash!: string | null;

  @Column({ name: 'api_key_last4', type: 'text', nullable: true })
  apiKeyLast4!: string | null;

  @Column({ name: 'api_key_created_at', type: 'timestamptz', nullable: true })
  apiKeyCreatedAt!: Date | null;

  /** The HMAC signing secret sealed with the key ring (AAD: the trigger). */
  @Column({ name: 'signing_secret', type: 'text', nullable: true })
  signingSecret!: string | null;

  @Column({ name: 'signing_secret_key_version', type: 'integer', nullable: true })
  signingSecretKeyVersion!: number | null;

  @Column({ name: 'signing_secret_created_at', type: 'timestamptz', nullable: true })
  signingSecretCreatedAt!: Date | null;
}

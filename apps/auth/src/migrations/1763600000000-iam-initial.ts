import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The identity schema: users, workspaces, groups and policies, service accounts, keys, OIDC state. */
export class IamInitial1763600000000 implements MigrationInterface {
  name = 'IamInitial1763600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE iam.users (
      id uuid PRIMARY KEY,
      email text NOT NULL,
      password_hash text NOT NULL,
      display_name text NOT NULL DEFAULT '',
      is_platform_admin boolean NOT NULL DEFAULT false,
      disabled_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE UNIQUE INDEX users_email_key ON iam.users (lower(email))`);

    await q.query(`CREATE TABLE iam.workspaces (
      id uuid PRIMARY KEY,
      slug text NOT NULL CONSTRAINT workspaces_slug_key UNIQUE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      created_by uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);

    await q.query(`CREATE TABLE iam.groups (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL REFERENCES iam.workspaces (slug) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT groups_workspace_name_key UNIQUE (workspace_slug, name)
    )`);
    await q.query(`CREATE TABLE iam.policies (
      id uuid PRIMARY KEY,
      group_id uuid NOT NULL REFERENCES iam.groups (id) ON DELETE CASCADE,
      resource text NOT NULL,
      actions text[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT policies_group_resource_key UNIQUE (group_id, resource)
    )`);
    await q.query(`CREATE TABLE iam.group_members (
      group_id uuid NOT NULL REFERENCES iam.groups (id) ON DELETE CASCADE,
      principal_type text NOT NULL CHECK (principal_type IN ('user', 'service_account')),
      principal_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (group_id, principal_type, principal_id)
    )`);
    await q.query(`CREATE INDEX group_members_principal_idx ON iam.group_members (principal_type, principal_id)`);

    await q.query(`CREATE TABLE iam.service_accounts (
      id serial PRIMARY KEY,
      workspace_slug text NOT NULL REFERENCES iam.workspaces (slug) ON DELETE CASCADE,
      client_id text NOT NULL CONSTRAINT service_accounts_client_id_key UNIQUE,
      secret_hash text NOT NULL,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      grant_types text[] NOT NULL DEFAULT ARRAY['client_credentials'],
      scope text NOT NULL DEFAULT 'openid',
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz,
      CONSTRAINT service_accounts_workspace_name_key UNIQUE (workspace_slug, name)
    )`);

    await q.query(`CREATE TABLE iam.publishable_keys (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL REFERENCES iam.workspaces (slug) ON DELETE CASCADE,
      name text NOT NULL,
      prefix text NOT NULL,
      key_hash text NOT NULL CONSTRAINT publishable_keys_hash_key UNIQUE,
      permissions text[] NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`);
    await q.query(`CREATE INDEX publishable_keys_workspace_idx ON iam.publishable_keys (workspace_slug)`);

    await q.query(`CREATE TABLE iam.signing_keys (
      kid text PRIMARY KEY,
      alg text NOT NULL,
      public_jwk jsonb NOT NULL,
      private_jwk text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      activates_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    )`);
    await q.query(`CREATE TABLE iam.secrets (
      name text PRIMARY KEY,
      value text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);

    await q.query(`CREATE TABLE iam.oidc_payloads (
      kind text NOT NULL,
      id text NOT NULL,
      payload jsonb NOT NULL,
      grant_id text,
      uid text,
      user_code text,
      expires_at timestamptz,
      consumed_at timestamptz,
      PRIMARY KEY (kind, id)
    )`);
    await q.query(`CREATE INDEX oidc_payloads_grant_idx ON iam.oidc_payloads (grant_id)`);
    await q.query(`CREATE INDEX oidc_payloads_uid_idx ON iam.oidc_payloads (uid)`);
    await q.query(`CREATE INDEX oidc_payloads_expires_idx ON iam.oidc_payloads (expires_at)`);

    await q.query(`CREATE TABLE iam.login_workspaces (
      grant_id text PRIMARY KEY,
      workspace_slug text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'login_workspaces',
      'oidc_payloads',
      'secrets',
      'signing_keys',
      'publishable_keys',
      'service_accounts',
      'group_members',
      'policies',
      'groups',
      'workspaces',
      'users',
    ]) {
      await q.query(`DROP TABLE IF EXISTS iam.${table}`);
    }
  }
}

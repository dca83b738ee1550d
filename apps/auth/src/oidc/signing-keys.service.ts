import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { associatedData, type Binding, type KeyRing, newUuid, SEAL_PURPOSES } from '@strata/crypto';
import { keyRingOf } from '@strata/platform';
import { AuthConfig } from '../auth.config.js';

export const SIGNING_ALG = 'ES256';

/** Where a signing key's private half (iam.signing_keys) is sealed: bound to its kid (earlier releases: the kid alone). */
export const signingKeyBinding = (kid: string): Binding => ({
  aad: associatedData(SEAL_PURPOSES.signingKey, kid),
  legacy: [kid],
});
/** Where a named provider secret (iam.secrets) is sealed: bound to its name (earlier releases: the name alone). */
export const providerSecretBinding = (name: string): Binding => ({
  aad: associatedData(SEAL_PURPOSES.providerSecret, name),
  legacy: [name],
});

interface KeyRow {
  kid: string;
  alg: string;
  private_jwk: string;
  activates_at: Date;
  retired_at: Date | null;
}

/**
 * Token signing keys: generated once and kept (private halves encrypted with the
 * key ring), so tokens survive restarts. Rotation publishes the new key first,
 * signs with it once it is active, and keeps publishing the old one until every
 * token it signed has expired.
 */
@Injectable()
export class SigningKeysService {
  private readonly logger = new Logger('SigningKeys');
  private readonly ring: KeyRing;

  constructor(
    private readonly db: DataSource,
    private readonly config: AuthConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  /** Creates the first key when there is none (once, across replicas). */
  async ensureKey(): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('strata-signing-keys'))`);
      const rows: unknown[] = await tx.query('SELECT 1 FROM iam.signing_keys LIMIT 1');
      if (rows.length === 0) await this.insert(tx.query.bind(tx), new Date());
    });
  }

  /**
   * Adds a new key that starts signing after the activation delay; the current
   * key retires at that moment and stays published for one token lifetime more.
   */
  async rotate(now = new Date()): Promise<{ kid: string; activatesAt: Date }> {
    return this.db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('strata-signing-keys'))`);
      const activatesAt = new Date(now.getTime() + this.config.SIGNING_KEY_ACTIVATION_DELAY_MS);
      await tx.query('UPDATE iam.signing_keys SET retired_at = $1 WHERE retired_at IS NULL', [activatesAt]);
      const kid = await this.insert(tx.query.bind(tx), activatesAt);
      this.logger.log({ msg: 'signing key rotated', kid, activatesAt: activatesAt.toISOString() });
      return { kid, activatesAt };
    });
  }

  /**
   * The private JWKS for the provider, the signing key first: the newest key
   * already active, then keys still to activate and keys still verifying.
   */
  async providerKeys(now = new Date()): Promise<JWK[]> {
    const graceMs = (this.config.ACCESS_TOKEN_TTL_SECONDS + 300) * 1000;
    const rows: KeyRow[] = await this.db.query(
      `SELECT kid, alg, private_jwk, activates_at, retired_at FROM iam.signing_keys
        WHERE retired_at IS NULL OR retired_at > $1 ORDER BY activates_at DESC`,
      [new Date(now.getTime() - graceMs)],
    );
    const active = rows.find((r) => r.activates_at <= now) ?? rows.at(-1);
    const ordered = active ? [active, ...rows.filter((r) => r !== active)] : rows;
    return ordered.map((r) => ({
      ...(JSON.parse(this.ring.unsealString(r.private_jwk, signingKeyBinding(r.kid))) as JWK),
      kid: r.kid,
      alg: r.alg,
      use: 'sig',
    }));
  }

  private async insert(
    query: (sql: string, params: unknown[]) => Promise<unknown>,
    activatesAt: Date,
  ): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = newUuid();
    const privateJwk = await exportJWK(privateKey);
    const publicJwk = await exportJWK(publicKey);
    await query(
      'INSERT INTO iam.signing_keys (kid, alg, public_jwk, private_jwk, activates_at) VALUES ($1, $2, $3, $4, $5)',
      [
        kid,
        SIGNING_ALG,
        { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' },
        this.ring.seal(JSON.stringify(privateJwk), signingKeyBinding(kid)),
        activatesAt,
      ],
    );
    return kid;
  }

  /** Cookie-signing keys of the provider, generated once and kept encrypted. */
  async cookieKeys(): Promise<string[]> {
    const name = 'oidc-cookie-keys';
    const fresh = this.ring.seal(JSON.stringify([newUuid() + newUuid()]), providerSecretBinding(name));
    await this.db.query('INSERT INTO iam.secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
      name,
      fresh,
    ]);
    const rows: { value: string }[] = await this.db.query('SELECT value FROM iam.secrets WHERE name = $1', [name]);
    return JSON.parse(this.ring.unsealString(rows[0]!.value, providerSecretBinding(name))) as string[];
  }
}

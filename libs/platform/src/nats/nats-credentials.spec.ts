import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { nkeys, type Authenticator, type JwtAuth } from '@nats-io/transport-node';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { ServiceConfig } from '../config/service-config.js';
import { natsConnectionOptions } from './nats-credentials.js';

const DEV = { STRATA_ENV: 'development' };

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(ServiceConfig, { ...DEV, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** A credentials file as `nsc` writes it: a user JWT and the seed that signs for it. */
function credsFile(jwt: string, seed: string): string {
  return [
    '-----BEGIN NATS USER JWT-----',
    jwt,
    '------END NATS USER JWT------',
    '',
    '************************* IMPORTANT *************************',
    '',
    '-----BEGIN USER NKEY SEED-----',
    seed,
    '------END USER NKEY SEED------',
    '',
  ].join('\n');
}

describe('NATS credentials settings', () => {
  it('takes none: the server lets anyone in (npm start, the tests)', () => {
    const config = loadConfig(ServiceConfig, DEV);
    expect(natsConnectionOptions(config)).toEqual({ inboxPrefix: '_INBOX' });
  });

  it('takes a user and a password, with an inbox of its own', () => {
    const config = loadConfig(ServiceConfig, {
      ...DEV,
      NATS_USER: 'strata-data',
      NATS_PASSWORD: 'pw0123456789abcdef',
      NATS_INBOX_PREFIX: '_INBOX.strata-data',
    });
    expect(natsConnectionOptions(config)).toEqual({
      inboxPrefix: '_INBOX.strata-data',
      user: 'strata-data',
      pass: 'pw0123456789abcdef',
    });
  });

  it('refuses a half or a double credential, and a seed that is not a user seed, never printing a secret', () => {
    const seed = text(nkeys.createUser().getSeed());
    expect(problemsOf({ NATS_USER: 'strata-data' })).toEqual([
      'NATS_USER="strata-data": NATS_USER and NATS_PASSWORD go together',
    ]);
    expect(problemsOf({ NATS_PASSWORD: 'pw0123456789abcdef' })).toEqual([
      'NATS_PASSWORD=[secret]: NATS_USER and NATS_PASSWORD go together',
    ]);
    expect(problemsOf({ NATS_USER: 'u', NATS_PASSWORD: 'p', NATS_NKEY_SEED: seed })).toEqual([
      'NATS_PASSWORD=[secret]: give one of NATS_PASSWORD, NATS_NKEY_SEED, NATS_CREDS_FILE, not several',
      'NATS_NKEY_SEED=[secret]: give one of NATS_PASSWORD, NATS_NKEY_SEED, NATS_CREDS_FILE, not several',
    ]);
    expect(problemsOf({ NATS_NKEY_SEED: text(nkeys.createAccount().getSeed()) })).toEqual([
      'NATS_NKEY_SEED=[secret]: must be an nkey user seed (SU and 56 base32 characters)',
    ]);
    expect(problemsOf({ NATS_USER: 'a.b', NATS_PASSWORD: 'p' })).toEqual([
      'NATS_USER="a.b": must be a NATS user name (no spaces, dots or wildcards)',
    ]);
    expect(problemsOf({ NATS_INBOX_PREFIX: '_INBOX.>' })).toEqual([
      'NATS_INBOX_PREFIX="_INBOX.>": must be a subject without wildcards',
    ]);
  });

  it("signs the server's nonce with an nkey seed", () => {
    const user = nkeys.createUser();
    const options = natsConnectionOptions(loadConfig(ServiceConfig, { ...DEV, NATS_NKEY_SEED: text(user.getSeed()) }));
    const signed = (options.authenticator as Authenticator)('a-nonce') as { nkey: string; sig: string };
    expect(signed.nkey).toBe(user.getPublicKey());
    expect(user.verify(new TextEncoder().encode('a-nonce'), Buffer.from(signed.sig, 'base64url'))).toBe(true);
  });

  describe('a credentials file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-creds-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('sends its JWT and signs with its seed, reading the file again at each connection (a rotated file is taken)', () => {
      const file = join(dir, 'user.creds');
      const first = nkeys.createUser();
      writeFileSync(file, credsFile('eyJ0eXAiOiJKV1QifQ.first.sig', text(first.getSeed())));
      const options = natsConnectionOptions(loadConfig(ServiceConfig, { ...DEV, NATS_CREDS_FILE: file }));
      const authenticate = options.authenticator as Authenticator;
      const signed = authenticate('nonce-1') as JwtAuth & { nkey: string; sig: string };
      expect(signed.jwt).toBe('eyJ0eXAiOiJKV1QifQ.first.sig');
      expect(signed.nkey).toBe(first.getPublicKey());
      expect(first.verify(new TextEncoder().encode('nonce-1'), Buffer.from(signed.sig, 'base64url'))).toBe(true);

      const second = nkeys.createUser();
      writeFileSync(file, credsFile('eyJ0eXAiOiJKV1QifQ.second.sig', text(second.getSeed())));
      const again = authenticate('nonce-2') as JwtAuth & { nkey: string };
      expect([again.jwt, again.nkey]).toEqual(['eyJ0eXAiOiJKV1QifQ.second.sig', second.getPublicKey()]);
    });

    it('names the file when it cannot be read', () => {
      const options = natsConnectionOptions(
        loadConfig(ServiceConfig, { ...DEV, NATS_CREDS_FILE: join(dir, 'missing.creds') }),
      );
      expect(() => (options.authenticator as Authenticator)('n')).toThrow(/missing\.creds/);
    });
  });
});

import { readFileSync } from 'node:fs';
import { credsAuthenticator, nkeyAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/** The settings a service authenticates to NATS with (part of every service's config). */
export interface NatsCredentialSettings {
  readonly NATS_USER?: string;
  readonly NATS_PASSWORD?: string;
  readonly NATS_NKEY_SEED?: string;
  readonly NATS_CREDS_FILE?: string;
  readonly NATS_INBOX_PREFIX: string;
}

/** The three ways to prove who a service is; at most one is given. */
const CREDENTIALS = ['NATS_PASSWORD', 'NATS_NKEY_SEED', 'NATS_CREDS_FILE'] as const;

/**
 * The connection options that authenticate a service to NATS: a user and
 * password, an nkey (the server knows its public key; the seed signs the
 * server's nonce), or a credentials file (a user JWT and its seed, as `nsc`
 * writes them, read again at each reconnect so a rotated file is picked up).
 * None of them: the server must let anyone in (`npm start` and the tests).
 * Replies come to the service's own inbox prefix, which its NATS user may
 * subscribe to when no other user may.
 */
export function natsConnectionOptions(settings: NatsCredentialSettings): Partial<ConnectionOptions> {
  const options: Partial<ConnectionOptions> = { inboxPrefix: settings.NATS_INBOX_PREFIX };
  if (settings.NATS_NKEY_SEED) {
    return { ...options, authenticator: nkeyAuthenticator(new TextEncoder().encode(settings.NATS_NKEY_SEED)) };
  }
  if (settings.NATS_CREDS_FILE) {
    const file = settings.NATS_CREDS_FILE;
    return { ...options, authenticator: credsAuthenticator(() => readFileSync(file)) };
  }
  if (settings.NATS_USER) return { ...options, user: settings.NATS_USER, pass: settings.NATS_PASSWORD ?? '' };
  return options;
}

/** At most one of NATS_PASSWORD, NATS_NKEY_SEED and NATS_CREDS_FILE. */
export function OneNatsCredential(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'oneNatsCredential',
      validator: {
        validate: (_value: unknown, args) => {
          const settings = args?.object as Partial<Record<(typeof CREDENTIALS)[number], unknown>>;
          return CREDENTIALS.filter((name) => settings[name] !== undefined && settings[name] !== '').length <= 1;
        },
        defaultMessage: () => `give one of ${CREDENTIALS.join(', ')}, not several`,
      },
    },
    options,
  );
}

/** NATS_PASSWORD is the password of NATS_USER, and NATS_USER has one. */
export function UserWithPassword(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'userWithPassword',
      validator: {
        validate: (_value: unknown, args) => {
          const { NATS_USER: user, NATS_PASSWORD: password } = args?.object as Partial<NatsCredentialSettings>;
          return Boolean(user) === Boolean(password);
        },
        defaultMessage: () => 'NATS_USER and NATS_PASSWORD go together',
      },
    },
    options,
  );
}

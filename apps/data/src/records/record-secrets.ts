import { Injectable } from '@nestjs/common';
import type { Collection, PropertyDefinition } from '@strata/contracts';
import { KeyRing } from '@strata/crypto';
import { keyRingOf } from '@strata/platform';
import { DataConfig } from '../data.config.js';
import {
  mapSecrets,
  maskChanges,
  maskSecrets,
  secretFields,
  SECRET_MASK,
  withoutSecrets,
  type Changes,
  type SecretFields,
} from './secret-paths.js';

export { SECRET_MASK } from './secret-paths.js';

/** The parts of a collection that say where its secrets are and what they are bound to. */
export type SecretSchema = Pick<Collection, 'id' | 'properties'>;

/**
 * The associated data of a record secret: collection, record and field path, so an
 * envelope opens only in the place it was written for (not in another field, nor in
 * the same field of another record).
 */
export function recordBinding(collectionId: string, recordId: string, path: string): string {
  return `record:${collectionId}:${recordId}:${path}`;
}

/** The binding of envelopes written before record binding: collection and (top-level) field only. */
export function legacyBinding(collectionId: string, path: string): string {
  return `${collectionId}:${path}`;
}

/** What one stored record's secrets look like against the ring (for `reencrypt`). */
export interface SecretsState {
  /** Envelopes by key version. */
  readonly versions: ReadonlyMap<number, number>;
  /** Envelopes still bound the legacy way (collection and field only). */
  readonly legacyBound: number;
  /** Plain strings at secret locations (a field made secret while holding values, before that was handled). */
  readonly unsealed: number;
}

/**
 * Secret string fields (`isSecret`, at any depth of objects and arrays of objects)
 * are stored as key-ring envelopes (AES-256-GCM, key version inside), bound to
 * their collection, record and field path. Plaintext leaves the service only
 * towards callers holding `secrets:reveal`; everything else (events, changelog,
 * history changes, callers without the permission) sees {@link SECRET_MASK}.
 */
@Injectable()
export class RecordSecrets {
  private readonly ring: KeyRing;
  private readonly legacy: boolean;

  constructor(config: DataConfig) {
    this.ring = keyRingOf(config);
    this.legacy = config.DATA_SECRETS_LEGACY_BINDING;
  }

  /** Encrypts the secret fields of plaintext data (in a copy). */
  seal(c: SecretSchema, recordId: string, plain: Record<string, unknown>): Record<string, unknown> {
    return mapSecrets(secretFields(c.properties), plain, {
      secret: (value, path) =>
        typeof value === 'string' ? this.ring.encrypt(value, recordBinding(c.id, recordId, path)) : value,
    });
  }

  /**
   * Decrypts the secret fields of stored data (for validation, writes and callers
   * allowed to see secrets). Throws when an envelope does not open where it is:
   * tampered, moved from another record or field, or of a key version no longer in the ring.
   */
  open(c: SecretSchema, recordId: string, stored: Record<string, unknown>): Record<string, unknown> {
    return mapSecrets(secretFields(c.properties), stored, {
      secret: (value, path) => (KeyRing.isEnvelope(value) ? this.openOne(c.id, recordId, path, value) : value),
    });
  }

  /**
   * Stored data as a caller sees it: secrets opened with `reveal`, masked without
   * (then nothing is decrypted at all). Envelopes outside the secret fields (left
   * by a secret field since removed or renamed) are masked for everyone.
   */
  present(
    c: SecretSchema,
    recordId: string,
    stored: Record<string, unknown>,
    reveal: boolean,
  ): Record<string, unknown> {
    const fields = secretFields(c.properties);
    if (!reveal) return maskSecrets(fields, stored);
    return mapSecrets(fields, stored, {
      secret: (value, path) => (KeyRing.isEnvelope(value) ? this.openOne(c.id, recordId, path, value) : value),
      stray: () => SECRET_MASK,
    });
  }

  /** Replaces secret values (plain or sealed) with the mask: for events. */
  mask(properties: readonly PropertyDefinition[], data: Record<string, unknown>): Record<string, unknown> {
    return maskSecrets(secretFields(properties), data);
  }

  /** Per-field changes with secrets masked: what the changelog and versions store, and show. */
  maskChanges(properties: readonly PropertyDefinition[], changes: Changes): Changes {
    return maskChanges(secretFields(properties), changes);
  }

  /** Data without its secret fields: what computed expressions see. */
  hide(properties: readonly PropertyDefinition[], data: Record<string, unknown>): Record<string, unknown> {
    return withoutSecrets(secretFields(properties), data);
  }

  /**
   * Stored data with every secret under the active key and bound to its record,
   * plain strings at secret locations sealed; `undefined` when it already is.
   */
  reseal(c: SecretSchema, recordId: string, stored: Record<string, unknown>): Record<string, unknown> | undefined {
    let changed = false;
    const out = mapSecrets(secretFields(c.properties), stored, {
      secret: (value, path) => {
        const binding = recordBinding(c.id, recordId, path);
        if (typeof value !== 'string') return value;
        const next = KeyRing.isEnvelope(value)
          ? this.ring.reencrypt(value, this.candidates(c.id, recordId, path), binding)
          : this.ring.encrypt(value, binding);
        if (next !== value) changed = true;
        return next;
      },
    });
    return changed ? out : undefined;
  }

  /** Counts what {@link reseal} would change (without the active key's envelopes bound to their record). */
  inspect(c: SecretSchema, recordId: string, stored: Record<string, unknown>): SecretsState {
    const versions = new Map<number, number>();
    let legacyBound = 0;
    let unsealed = 0;
    mapSecrets(secretFields(c.properties), stored, {
      secret: (value, path) => {
        if (typeof value !== 'string') return value;
        if (!KeyRing.isEnvelope(value)) {
          unsealed++;
          return value;
        }
        const version = KeyRing.versionOf(value);
        versions.set(version, (versions.get(version) ?? 0) + 1);
        if (
          this.ring.versions.includes(version) &&
          this.ring.open(value, this.candidates(c.id, recordId, path)).binding > 0
        )
          legacyBound++;
        return value;
      },
    });
    return { versions, legacyBound, unsealed };
  }

  get activeVersion(): number {
    return this.ring.activeVersion;
  }

  /** The secret tree of a schema (for callers that walk data themselves). */
  fields(properties: readonly PropertyDefinition[]): SecretFields {
    return secretFields(properties);
  }

  private openOne(collectionId: string, recordId: string, path: string, envelope: string): string {
    try {
      return this.ring.open(envelope, this.candidates(collectionId, recordId, path)).plaintext.toString('utf8');
    } catch (err) {
      throw new Error(`the secret ${path} of record ${recordId} cannot be opened: ${(err as Error).message}`);
    }
  }

  private candidates(collectionId: string, recordId: string, path: string): string[] {
    const bindings = [recordBinding(collectionId, recordId, path)];
    // Legacy envelopes predate nested secrets: top-level fields only.
    if (this.legacy && !path.includes('.')) bindings.push(legacyBinding(collectionId, path));
    return bindings;
  }
}

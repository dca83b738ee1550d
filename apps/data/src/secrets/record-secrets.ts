import { Injectable } from '@nestjs/common';
import type { Collection, PropertyDefinition } from '@strata/contracts';
import { associatedData, EnvelopeError, KeyRing, SEAL_PURPOSES } from '@strata/crypto';
import { keyRingOf } from '@strata/platform';
import { DataConfig } from '../data.config.js';
import {
  mapSecrets,
  maskChanges,
  maskSecrets,
  secretFields,
  SECRET_MASK,
  type Changes,
  type SecretFields,
} from '../secrets/secret-paths.js';

/** The parts of a collection that say where its secrets are and what they are bound to. */
export type SecretSchema = Pick<Collection, 'id' | 'properties'>;

/**
 * The associated data of a record secret: its purpose, collection, record and field
 * path, so an envelope opens only in the place it was written for (not in another
 * field, nor in the same field of another record, nor as any other sealed value).
 */
export function recordBinding(collectionId: string, recordId: string, path: string): string {
  return associatedData(SEAL_PURPOSES.recordSecret, collectionId, recordId, path);
}

/** The binding of envelopes written before purpose bindings: collection, record and path, colon-separated. */
export function colonBinding(collectionId: string, recordId: string, path: string): string {
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
  /** Envelopes still bound an earlier way (colon-separated, or collection and field only). */
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

  /**
   * Stored data with every envelope under the active key and bound to its record,
   * and plain strings at secret locations sealed; `undefined` when it already is
   * so. Envelopes outside the secret fields (a secret field since removed or
   * renamed left them where they were sealed) are re-encrypted in place too, so
   * that no value is lost when the old key goes. Throws when one does not open.
   */
  reseal(c: SecretSchema, recordId: string, stored: Record<string, unknown>): Record<string, unknown> | undefined {
    let changed = false;
    const again = (envelope: string, path: string): string => {
      const next = this.ring.reencrypt(
        envelope,
        this.candidates(c.id, recordId, path),
        recordBinding(c.id, recordId, path),
      );
      if (next !== envelope) changed = true;
      return next;
    };
    const out = mapSecrets(secretFields(c.properties), stored, {
      secret: (value, path) => {
        if (typeof value !== 'string') return value;
        if (KeyRing.isEnvelope(value)) return again(value, path);
        changed = true;
        return this.ring.encrypt(value, recordBinding(c.id, recordId, path));
      },
      stray: again,
    });
    return changed ? out : undefined;
  }

  /**
   * Counts what {@link reseal} looks at: envelopes by version (from their headers)
   * and plain values in secret fields; with `verify`, also opens every envelope
   * of a version in the ring (throwing when one does not open) and counts those
   * bound an earlier way.
   */
  inspect(c: SecretSchema, recordId: string, stored: Record<string, unknown>, verify: boolean): SecretsState {
    const versions = new Map<number, number>();
    let legacyBound = 0;
    let unsealed = 0;
    const count = (envelope: string, path: string): string => {
      const version = KeyRing.versionOf(envelope);
      versions.set(version, (versions.get(version) ?? 0) + 1);
      if (
        verify &&
        this.ring.has(version) &&
        this.ring.open(envelope, this.candidates(c.id, recordId, path)).binding > 0
      )
        legacyBound++;
      return envelope;
    };
    mapSecrets(secretFields(c.properties), stored, {
      secret: (value, path) => {
        if (KeyRing.isEnvelope(value)) return count(value, path);
        if (typeof value === 'string') unsealed++;
        return value;
      },
      stray: count,
    });
    return { versions, legacyBound, unsealed };
  }

  /**
   * A schema change's rewrite of stored data: envelopes at `opened` paths (secret
   * fields made plain) decrypted, plain strings at `sealed` paths (string fields
   * made secret) encrypted; `undefined` when nothing changed.
   */
  convert(
    collectionId: string,
    recordId: string,
    stored: Record<string, unknown>,
    opened: SecretFields,
    sealed: SecretFields,
  ): Record<string, unknown> | undefined {
    let changed = false;
    const decrypted = mapSecrets(opened, stored, {
      secret: (value, path) => {
        if (!KeyRing.isEnvelope(value)) return value;
        changed = true;
        return this.openOne(collectionId, recordId, path, value);
      },
    });
    const out = mapSecrets(sealed, decrypted, {
      secret: (value, path) => {
        if (typeof value !== 'string' || KeyRing.isEnvelope(value)) return value;
        changed = true;
        return this.ring.encrypt(value, recordBinding(collectionId, recordId, path));
      },
    });
    return changed ? out : undefined;
  }

  /** The ring itself, for `reencrypt`'s report. */
  get keyRing(): KeyRing {
    return this.ring;
  }

  private openOne(collectionId: string, recordId: string, path: string, envelope: string): string {
    try {
      return this.ring.open(envelope, this.candidates(collectionId, recordId, path)).plaintext.toString('utf8');
    } catch (err) {
      if (!(err instanceof EnvelopeError)) throw err;
      throw new EnvelopeError(`the secret ${path} of record ${recordId} cannot be opened: ${err.message}`);
    }
  }

  private candidates(collectionId: string, recordId: string, path: string): string[] {
    const bindings = [recordBinding(collectionId, recordId, path), colonBinding(collectionId, recordId, path)];
    // Legacy envelopes predate nested secrets: top-level fields only.
    if (this.legacy && !path.includes('.')) bindings.push(legacyBinding(collectionId, path));
    return bindings;
  }
}

import { Injectable } from '@nestjs/common';
import type { PropertyDefinition } from '@strata/contracts';
import { KeyRing } from '@strata/crypto';
import { ServiceConfig } from '@strata/platform';

/** What a secret field shows to a caller without `secrets:reveal`, and in every event. */
export const SECRET_MASK = '********';

const secretNames = (properties: readonly PropertyDefinition[]): string[] =>
  properties.filter((p) => p.type === 'string' && p.isSecret).map((p) => p.name);

/**
 * Secret string fields (`isSecret`) are stored encrypted with the key ring
 * (AES-256-GCM envelope, key version inside), bound to their collection and
 * field so a ciphertext cannot be moved to another field.
 */
@Injectable()
export class RecordSecrets {
  private readonly ring: KeyRing;

  constructor(config: ServiceConfig) {
    this.ring = KeyRing.parse(config.STRATA_ENCRYPTION_KEYS);
  }

  /** Encrypts the secret fields of plaintext data (in a copy). */
  seal(
    collectionId: string,
    properties: readonly PropertyDefinition[],
    data: Record<string, unknown>,
  ): Record<string, unknown> {
    const out = { ...data };
    for (const name of secretNames(properties)) {
      const value = out[name];
      if (typeof value === 'string') out[name] = this.ring.encrypt(value, `${collectionId}:${name}`);
    }
    return out;
  }

  /** Decrypts stored data (for validation and for callers allowed to see secrets). */
  open(
    collectionId: string,
    properties: readonly PropertyDefinition[],
    data: Record<string, unknown>,
  ): Record<string, unknown> {
    const out = { ...data };
    for (const name of secretNames(properties)) {
      const value = out[name];
      if (typeof value === 'string' && value.startsWith('sv1.')) {
        out[name] = this.ring.decryptString(value, `${collectionId}:${name}`);
      }
    }
    return out;
  }

  /** Replaces secret values with the mask. */
  mask(properties: readonly PropertyDefinition[], data: Record<string, unknown>): Record<string, unknown> {
    const out = { ...data };
    for (const name of secretNames(properties)) if (typeof out[name] === 'string') out[name] = SECRET_MASK;
    return out;
  }
}

import { ValidateBy, type ValidationOptions } from 'class-validator';
import { KeyRing } from '@strata/crypto';

/** The settings a key ring is made of (part of every service's config). */
export interface KeyRingSettings {
  readonly STRATA_ENCRYPTION_KEYS: string;
  /** 0: the highest version in the ring encrypts. */
  readonly STRATA_ENCRYPTION_ACTIVE_KEY: number;
}

/** The service's key ring: every version it can read, and the one that encrypts. */
export function keyRingOf(settings: KeyRingSettings): KeyRing {
  return KeyRing.parse(settings.STRATA_ENCRYPTION_KEYS, settings.STRATA_ENCRYPTION_ACTIVE_KEY || undefined);
}

/** Why `spec` is not a usable key ring (the reason never quotes key material), or undefined. */
function ringProblem(spec: unknown, active = 0): string | undefined {
  if (typeof spec !== 'string') return 'is not a key ring';
  try {
    KeyRing.parse(spec, active || undefined);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** STRATA_ENCRYPTION_KEYS must parse: versions positive and distinct, every key 32 bytes. */
export function ValidKeyRing(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'validKeyRing',
      validator: {
        validate: (value: unknown) => ringProblem(value) === undefined,
        defaultMessage: (args) => `is not a usable key ring: ${ringProblem(args?.value) ?? ''}`,
      },
    },
    options,
  );
}

/** STRATA_ENCRYPTION_ACTIVE_KEY must be 0 or a version that STRATA_ENCRYPTION_KEYS holds. */
export function ActiveKeyInRing(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'activeKeyInRing',
      validator: {
        validate: (value: unknown, args) => {
          const spec = (args?.object as Partial<KeyRingSettings>).STRATA_ENCRYPTION_KEYS;
          // A ring that does not parse is reported on STRATA_ENCRYPTION_KEYS itself.
          if (typeof value !== 'number' || value === 0 || ringProblem(spec) !== undefined) return true;
          return ringProblem(spec, value) === undefined;
        },
        defaultMessage: () => 'must be 0 (the highest version) or a version that STRATA_ENCRYPTION_KEYS holds',
      },
    },
    options,
  );
}

import { associatedData, KeyRing, SEAL_PURPOSES, triggerSigningSecretBinding, type Binding } from '@strata/crypto';
import type { FieldError } from '@strata/contracts';
import type { JsonObject, JsonValue } from '../json.js';

/**
 * Where an owner's (a trigger's, a draft's) sealed values are bound: each
 * parameter by the owner and its name, the signing secret by the owner alone,
 * each purpose in its own namespace. Moved elsewhere, a value does not open.
 */
export interface SealBindings {
  param(name: string): Binding;
  readonly signingSecret: Binding;
}

/** The name earlier releases sealed the signing secret under, among the parameters. */
const LEGACY_SIGNING_SECRET = '#signingSecret';

/**
 * A parameter's binding. Earlier releases bound it as `<prefix>:<name>`; that
 * binding is still opened, but never for `#signingSecret`, whose legacy binding
 * is the signing secret's.
 */
export function paramBinding(aad: string, legacyPrefix: string, name: string): Binding {
  return { aad, legacy: name === LEGACY_SIGNING_SECRET ? [] : [`${legacyPrefix}:${name}`] };
}

/** A trigger's parameters and signing secret (the inbound service opens the secret with the same binding). */
export const triggerBindings = (triggerId: string): SealBindings => ({
  param: (name) =>
    paramBinding(
      associatedData(SEAL_PURPOSES.triggerParam, triggerId, name),
      `compute.triggers.params:${triggerId}`,
      name,
    ),
  signingSecret: triggerSigningSecretBinding(triggerId),
});

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{value, encrypted: true, keyVersion}`: how a sealed parameter is stored and answered. */
function isSealed(v: JsonValue | undefined): v is { value: string; encrypted: true; keyVersion: number } {
  return isObject(v) && v['encrypted'] === true && typeof v['value'] === 'string';
}

/**
 * A signing secret, always stored sealed (a plain string or `{value, encrypt: true}`
 * is sealed; the sealed form sent back is kept if it opens for this trigger).
 */
export function sealSigningSecret(
  ring: KeyRing,
  bind: SealBindings,
  secret: JsonValue,
): { secret: JsonObject } | { errors: FieldError[] } {
  if (isSealed(secret)) {
    try {
      ring.unseal(secret.value, bind.signingSecret);
      return { secret: { value: secret.value, encrypted: true, keyVersion: KeyRing.versionOf(secret.value) } };
    } catch {
      return {
        errors: [
          {
            field: 'triggerMetadata.signingSecret',
            message: 'is an encrypted value of another trigger: send the secret itself',
          },
        ],
      };
    }
  }
  const plain = isObject(secret) ? secret['value'] : secret;
  const envelope = ring.seal(JSON.stringify(plain ?? null), bind.signingSecret);
  return { secret: { value: envelope, encrypted: true, keyVersion: KeyRing.versionOf(envelope) } };
}

/**
 * Seals every `{value, encrypt: true}` parameter with the key ring (AES-256-GCM,
 * bound to the trigger and the parameter's name) as `{value: <envelope>,
 * encrypted: true, keyVersion}`. A parameter sent back in that sealed form (as
 * GET answered it) is kept if it opens for this trigger and name; a sealed value
 * copied from elsewhere does not, and is refused.
 */
export function sealTriggerParams(
  ring: KeyRing,
  bind: SealBindings,
  params: JsonObject,
): { params: JsonObject } | { errors: FieldError[] } {
  const out: [string, JsonValue][] = [];
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (isObject(value) && value['encrypt'] === true) {
      const envelope = ring.seal(JSON.stringify(value['value'] ?? null), bind.param(name));
      out.push([name, { value: envelope, encrypted: true, keyVersion: KeyRing.versionOf(envelope) }]);
    } else if (isSealed(value)) {
      try {
        ring.unseal(value.value, bind.param(name));
        out.push([name, { value: value.value, encrypted: true, keyVersion: KeyRing.versionOf(value.value) }]);
      } catch {
        errors.push({
          field: `triggerMetadata.params.${name}`,
          message: 'is an encrypted value of another trigger or parameter: send it as {value, encrypt: true}',
        });
      }
    } else {
      out.push([name, value]);
    }
  }
  // From entries: a parameter named `__proto__` is a key like any other, not the object's prototype.
  return errors.length ? { errors } : { params: Object.fromEntries(out) };
}

/** The parameters as the function receives them in `triggerParams`: sealed ones opened. */
export function openTriggerParams(ring: KeyRing, bind: SealBindings, params: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(params).map(([name, value]) => [
      name,
      isSealed(value) ? openSealed(ring, value.value, bind.param(name)) : value,
    ]),
  );
}

/** The names of the parameters stored sealed: what a run masks in its logs and result (run-masking.ts). */
export function sealedParamNames(params: JsonObject): string[] {
  return Object.entries(params).flatMap(([name, value]) => (isSealed(value) ? [name] : []));
}

/**
 * The parameters as a request would send them again: sealed ones opened back
 * into `{value, encrypt: true}` (a draft published into a trigger, which seals
 * them for itself).
 */
export function resendableParams(ring: KeyRing, bind: SealBindings, params: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(params).map(([name, value]) => [
      name,
      isSealed(value) ? { value: openSealed(ring, value.value, bind.param(name)), encrypt: true } : value,
    ]),
  );
}

/** A sealed signing secret as a request would send it again (`{value, encrypt: true}`); others as they are. */
export function resendableSigningSecret(ring: KeyRing, bind: SealBindings, secret: JsonValue): JsonValue {
  return isSealed(secret) ? { value: openSealed(ring, secret.value, bind.signingSecret), encrypt: true } : secret;
}

function openSealed(ring: KeyRing, envelope: string, binding: Binding): JsonValue {
  return JSON.parse(ring.unsealString(envelope, binding)) as JsonValue;
}

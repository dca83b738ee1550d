import { associatedData, SEAL_PURPOSES, type KeyRing } from '@strata/crypto';
import type { FieldError } from '@strata/contracts';
import type { JsonObject, JsonValue } from '../json.js';
import { paramNameProblem } from '../triggers/metadata/index.js';
import {
  paramBinding,
  resendableParams,
  resendableSigningSecret,
  sealSigningSecret,
  sealTriggerParams,
  type SealBindings,
} from '../triggers/trigger-params.js';

/** A trigger draft's secrets are bound to the draft: copied into another draft or a trigger, they do not open. */
export const draftBindings = (draftId: string): SealBindings => ({
  param: (name) =>
    paramBinding(associatedData(SEAL_PURPOSES.draftParam, draftId, name), `compute.drafts.params:${draftId}`, name),
  signingSecret: {
    aad: associatedData(SEAL_PURPOSES.draftSigningSecret, draftId),
    legacy: [`compute.drafts.params:${draftId}:#signingSecret`],
  },
});

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A function-triggers draft's body with its secrets sealed as a trigger seals
 * them: each `{value, encrypt: true}` parameter and the signing secret become
 * `{value: <envelope>, encrypted: true, keyVersion}`, so a draft never keeps or
 * answers them in the clear. A value sealed for this draft (as GET answered it)
 * is kept; one sealed elsewhere is refused. The rest of the body is kept as
 * sent: a draft need not be complete or valid until it is published.
 */
export function sealDraftSecrets(
  ring: KeyRing,
  draftId: string,
  data: JsonObject,
): { data: JsonObject } | { errors: FieldError[] } {
  const metadata = data['triggerMetadata'];
  if (!isObject(metadata)) return { data };
  const bind = draftBindings(draftId);
  const sealed: JsonObject = { ...metadata };
  const errors: FieldError[] = [];
  const params = metadata['params'];
  if (isObject(params)) {
    const refused = refusedNames(params);
    errors.push(...refused);
    // One entry per bad field: a refused name is not looked at further.
    const named = refused.length
      ? Object.fromEntries(Object.entries(params).filter(([name]) => paramNameProblem(name) === undefined))
      : params;
    errors.push(...malformedSecrets(named));
    const result = sealTriggerParams(ring, bind, named);
    if ('errors' in result) errors.push(...result.errors);
    else sealed['params'] = result.params;
  }
  const secret = metadata['signingSecret'];
  if (secret !== undefined && secret !== null) {
    const result = sealSigningSecret(ring, bind, secret);
    if ('errors' in result) errors.push(...result.errors);
    else sealed['signingSecret'] = result.secret;
  }
  if (errors.length) return { errors: errors.map((e) => ({ ...e, field: `data.${e.field}` })) };
  return { data: { ...data, triggerMetadata: sealed } };
}

/** Parameter names a trigger refuses (`#` first, a lone surrogate): refused in a draft too, one entry each. */
function refusedNames(params: JsonObject): FieldError[] {
  return Object.keys(params).flatMap((name) => {
    const problem = paramNameProblem(name);
    return problem ? [{ field: `triggerMetadata.params.${name}`, message: problem }] : [];
  });
}

/**
 * Parameters marked for encryption in a form the trigger would refuse (`encrypt:
 * "true"`, no value, extra keys beside value and encrypt): a draft need not be valid, but
 * such a value would be kept in the clear, or sealed into a trigger its create
 * refuses. Each is refused here, by name.
 */
function malformedSecrets(params: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (!isObject(value) || !('encrypt' in value)) continue;
    const encrypt = value['encrypt'];
    const extra = Object.keys(value).filter((key) => key !== 'value' && key !== 'encrypt');
    const wellFormed = encrypt === false || (encrypt === true && 'value' in value && extra.length === 0);
    if (!wellFormed) {
      errors.push({
        field: `triggerMetadata.params.${name}`,
        message: 'a parameter to encrypt is {value, encrypt: true}: encrypt a boolean, a value, no other key',
      });
    }
  }
  return errors;
}

/** The draft's body as the create request would carry it: its sealed secrets opened back into `{value, encrypt: true}`. */
export function openDraftSecrets(ring: KeyRing, draftId: string, data: JsonObject): JsonObject {
  const metadata = data['triggerMetadata'];
  if (!isObject(metadata)) return data;
  const bind = draftBindings(draftId);
  const opened: JsonObject = { ...metadata };
  if (isObject(metadata['params'])) opened['params'] = resendableParams(ring, bind, metadata['params']);
  if (metadata['signingSecret'] !== undefined) {
    opened['signingSecret'] = resendableSigningSecret(ring, bind, metadata['signingSecret']);
  }
  return { ...data, triggerMetadata: opened };
}

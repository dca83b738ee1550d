import { createHmac } from 'node:crypto';

/**
 * The function principal: the service account compute functions of one
 * workspace call the platform API as (docs/compute.md, "The function principal").
 * Its client id is derived from the workspace; its secret from a key the auth
 * and compute services share (STRATA_FUNCTIONS_PRINCIPAL_KEY), so neither has to
 * hand the other a secret, and rotating the key rotates every secret.
 */
export function functionPrincipalClientId(workspace: string): string {
  return `ci_functions_${workspace}`;
}

/** Whether a client id is a function principal's. */
export function isFunctionPrincipalClientId(clientId: string): boolean {
  return clientId.startsWith('ci_functions_');
}

/** The principal's client secret: HMAC-SHA256 of its client id under the shared key (`sk_` + 64 hex). */
export function functionPrincipalSecret(key: Buffer, clientId: string): string {
  return `sk_${createHmac('sha256', key).update(`strata-function-principal:${clientId}`).digest('hex')}`;
}

/** Reads the shared key setting: base64 of at least 32 bytes. */
export function parseFunctionPrincipalKey(setting: string): Buffer {
  const key = Buffer.from(setting.trim(), 'base64');
  if (key.length < 32) throw new Error('STRATA_FUNCTIONS_PRINCIPAL_KEY must be the base64 of at least 32 bytes');
  return key;
}

import { randomBytes } from 'node:crypto';
import { associatedData, constantTimeEqual, hashToken, SEAL_PURPOSES, type Binding } from '@strata/crypto';

/** `sek_` and 43 base64url characters (256 bits): an endpoint's API key, shown once. */
export function newEndpointApiKey(): string {
  return `sek_${randomBytes(32).toString('base64url')}`;
}

/** `ses_` and 43 base64url characters (256 bits): an endpoint's HMAC signing secret, shown once. */
export function newEndpointSigningSecret(): string {
  return `ses_${randomBytes(32).toString('base64url')}`;
}

/** What is stored of an API key: its SHA-256 (a 256-bit random key needs no slow hash), never the key. */
export function apiKeyHash(key: string): string {
  return hashToken(key);
}

/** The last four characters, so an operator can tell keys apart without holding one. */
export function apiKeyLast4(key: string): string {
  return key.slice(-4);
}

/** Whether a presented key is the one whose hash is stored; constant time in where they differ. */
export function apiKeyMatches(presented: string, storedHash: string): boolean {
  return constantTimeEqual(hashToken(presented), storedHash);
}

/** Where an endpoint trigger's hmac signing secret is sealed (earlier releases: the legacy binding). */
export const endpointSecretBinding = (triggerId: string): Binding => ({
  aad: associatedData(SEAL_PURPOSES.endpointSigningSecret, triggerId),
  legacy: [`compute.endpoint_credentials.signing_secret:${triggerId}`],
});

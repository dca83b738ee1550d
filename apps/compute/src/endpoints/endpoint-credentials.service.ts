import { Injectable } from '@nestjs/common';
import { KeyRing } from '@strata/crypto';
import type { Tx, WorkspaceScope } from '@strata/db';
import { Clock, keyRingOf } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import type { TriggerEntity } from '../triggers/trigger.entity.js';
import { authModesOf } from './endpoint-auth-modes.js';
import {
  apiKeyHash,
  apiKeyLast4,
  endpointSecretBinding,
  newEndpointApiKey,
  newEndpointSigningSecret,
} from './endpoint-credentials.js';
import type { EndpointCredentialsEntity } from './endpoint-credentials.entity.js';
import { EndpointCredentialsRepository, type CredentialChanges } from './endpoint-credentials.repository.js';

/** Credentials issued now, in the clear: answered once (create, update, rotate) and kept nowhere. */
export interface IssuedCredentials {
  apiKey?: string;
  signingSecret?: string;
}

/** What GET shows of an endpoint's credentials: that they exist, never their values. */
export interface CredentialsSummary {
  apiKey: { last4: string; createdAt: string } | null;
  signingSecret: { keyVersion: number; createdAt: string } | null;
}

export type CredentialKind = keyof IssuedCredentials;

/**
 * The API key and HMAC signing secret of endpoint triggers: generated when a
 * trigger first takes the apiKey or hmac mode (create or update), dropped when
 * it leaves it, replaced on rotation. The key is stored as its SHA-256, the
 * secret sealed with the key ring (AES-256-GCM, bound to the trigger).
 */
@Injectable()
export class EndpointCredentials {
  private readonly ring: KeyRing;

  constructor(
    private readonly credentials: EndpointCredentialsRepository,
    private readonly clock: Clock,
    config: ComputeConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  /** Brings the trigger's credentials in line with its auth modes, in `tx`; answers what was issued. */
  async align(scope: WorkspaceScope, tx: Tx, trigger: TriggerEntity): Promise<IssuedCredentials | undefined> {
    if (trigger.executionType !== 'endpoint') return undefined;
    const modes = authModesOf(trigger.metadata);
    const stored = await this.credentials.find(scope, trigger.id, tx);
    const wanted: CredentialKind[] = [];
    const changes: { -readonly [K in keyof CredentialChanges]: CredentialChanges[K] } = {};
    if (modes.includes('apiKey')) {
      if (!stored?.apiKeyHash) wanted.push('apiKey');
    } else if (stored?.apiKeyHash) changes.apiKey = null;
    if (modes.includes('hmac')) {
      if (!stored?.signingSecret) wanted.push('signingSecret');
    } else if (stored?.signingSecret) changes.signingSecret = null;
    return this.issue(scope, tx, trigger.id, wanted, changes);
  }

  /** New values for the given credentials of a trigger that uses them; the old ones stop working at once. */
  rotate(scope: WorkspaceScope, tx: Tx, trigger: TriggerEntity, kinds: CredentialKind[]): Promise<IssuedCredentials> {
    return this.issue(scope, tx, trigger.id, kinds, {}).then((issued) => issued ?? {});
  }

  async summary(scope: WorkspaceScope, triggerId: string): Promise<CredentialsSummary> {
    return summaryOf(await this.credentials.find(scope, triggerId));
  }

  /** The stored credentials opened for checking a call: the key's hash and the secret in the clear. */
  async forCheck(
    scope: WorkspaceScope,
    triggerId: string,
  ): Promise<{ apiKeyHash: string | null; signingSecret: string | null }> {
    const row = await this.credentials.find(scope, triggerId);
    return {
      apiKeyHash: row?.apiKeyHash ?? null,
      signingSecret: row?.signingSecret
        ? this.ring.unsealString(row.signingSecret, endpointSecretBinding(triggerId))
        : null,
    };
  }

  private async issue(
    scope: WorkspaceScope,
    tx: Tx,
    triggerId: string,
    kinds: CredentialKind[],
    changes: CredentialChanges,
  ): Promise<IssuedCredentials | undefined> {
    const issued: IssuedCredentials = {};
    const all: { -readonly [K in keyof CredentialChanges]: CredentialChanges[K] } = { ...changes };
    if (kinds.includes('apiKey')) {
      const key = newEndpointApiKey();
      issued.apiKey = key;
      all.apiKey = { hash: apiKeyHash(key), last4: apiKeyLast4(key) };
    }
    if (kinds.includes('signingSecret')) {
      const secret = newEndpointSigningSecret();
      issued.signingSecret = secret;
      const sealed = this.ring.seal(secret, endpointSecretBinding(triggerId));
      all.signingSecret = { sealed, keyVersion: KeyRing.versionOf(sealed) };
    }
    await this.credentials.change(scope, tx, triggerId, all, this.clock.now());
    return Object.keys(issued).length > 0 ? issued : undefined;
  }
}

function summaryOf(row: EndpointCredentialsEntity | undefined): CredentialsSummary {
  return {
    apiKey:
      row?.apiKeyHash && row.apiKeyLast4 && row.apiKeyCreatedAt
        ? { last4: row.apiKeyLast4, createdAt: row.apiKeyCreatedAt.toISOString() }
        : null,
    signingSecret:
      row?.signingSecret && row.signingSecretKeyVersion !== null && row.signingSecretCreatedAt
        ? { keyVersion: row.signingSecretKeyVersion, createdAt: row.signingSecretCreatedAt.toISOString() }
        : null,
  };
}

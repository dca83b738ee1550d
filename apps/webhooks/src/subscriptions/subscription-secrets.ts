import { Injectable } from '@nestjs/common';
import { KeyRing, generateWebhookSecret } from '@strata/crypto';
import { ServiceConfig } from '@strata/platform';

/**
 * Subscription secrets at rest: key-ring envelopes (AES-256-GCM, key version
 * inside), bound to their subscription so an envelope cannot be moved to
 * another one. Plain secrets leave this class only towards the signer and in
 * the create and rotate responses.
 */
@Injectable()
export class SubscriptionSecrets {
  private readonly ring: KeyRing;

  constructor(config: ServiceConfig) {
    this.ring = KeyRing.parse(config.STRATA_ENCRYPTION_KEYS);
  }

  /** A new secret and its envelope. */
  issue(subscriptionId: string): { secret: string; sealed: string } {
    const secret = generateWebhookSecret();
    return { secret, sealed: this.seal(subscriptionId, secret) };
  }

  seal(subscriptionId: string, secret: string): string {
    return this.ring.encrypt(secret, `webhook-subscription:${subscriptionId}`);
  }

  open(subscriptionId: string, sealed: string): string {
    return this.ring.decryptString(sealed, `webhook-subscription:${subscriptionId}`);
  }
}

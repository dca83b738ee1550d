import { Injectable } from '@nestjs/common';
import { associatedData, type Binding, type KeyRing, generateWebhookSecret, SEAL_PURPOSES } from '@strata/crypto';
import { ServiceConfig, keyRingOf } from '@strata/platform';

/** Where a subscription's secrets (current and previous) are sealed: bound to it (earlier releases: the legacy binding). */
export const subscriptionBinding = (subscriptionId: string): Binding => ({
  aad: associatedData(SEAL_PURPOSES.webhookSubscriptionSecret, subscriptionId),
  legacy: [`webhook-subscription:${subscriptionId}`],
});

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
    this.ring = keyRingOf(config);
  }

  /** A new secret and its envelope. */
  issue(subscriptionId: string): { secret: string; sealed: string } {
    const secret = generateWebhookSecret();
    return { secret, sealed: this.seal(subscriptionId, secret) };
  }

  seal(subscriptionId: string, secret: string): string {
    return this.ring.seal(secret, subscriptionBinding(subscriptionId));
  }

  open(subscriptionId: string, sealed: string): string {
    return this.ring.unsealString(sealed, subscriptionBinding(subscriptionId));
  }
}

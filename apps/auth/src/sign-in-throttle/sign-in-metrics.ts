import { Injectable } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';

/** Which sign-in a refusal stopped, and which limit stopped it. */
export type SignInEndpoint = 'login' | 'token';
export type SignInLimit = 'account' | 'address';

/**
 * The auth service's sign-in instruments (docs/runbooks.md, "Metrics"):
 * OpenTelemetry no-ops unless the process collects metrics. No attribute names
 * an account or an address.
 */
@Injectable()
export class SignInMetrics {
  private readonly meter = metrics.getMeter('strata-auth');
  private readonly passwordChecks = this.meter.createCounter('strata.auth.password_checks', {
    description: 'Passwords checked against their scrypt hash (an unknown email against a decoy), by outcome',
  });
  private readonly refusals = this.meter.createCounter('strata.auth.sign_in_refusals', {
    description: 'Sign-ins refused with 429 before any credential was checked, by endpoint and by the limit reached',
  });

  passwordChecked(outcome: 'match' | 'mismatch'): void {
    this.passwordChecks.add(1, { outcome });
  }

  refused(endpoint: SignInEndpoint, limit: SignInLimit): void {
    this.refusals.add(1, { endpoint, limit });
  }
}

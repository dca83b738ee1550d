import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { ErrorCode } from '@strata/contracts';
import { FirstUseStore, NatsConnectionHolder, StrataException } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';

/** Added to the acceptance window, for clocks that disagree a little. */
const CLOCK_MARGIN_S = 60;

/**
 * Refuses an hmac-mode endpoint call whose signature was accepted before. An
 * accepted signature is remembered (the SHA-256 of its decoded bytes, with the
 * trigger's id) on every replica for twice COMPUTE_ENDPOINT_SIGNATURE_TOLERANCE_S
 * and a minute: the whole time its timestamp would otherwise let it pass again.
 * The bytes, not the header: before 2026-11-27 the same signature spelled again
 * (upper-case hex, base64, without `sha256=`) passed as a first use.
 */
@Injectable()
export class EndpointSignatureReplays {
  private readonly logger = new Logger('EndpointSignatureReplays');
  private readonly seen: FirstUseStore;

  constructor(nats: NatsConnectionHolder, config: ComputeConfig) {
    this.seen = new FirstUseStore(
      nats,
      `${config.NATS_PREFIX}_compute_endpoint_signatures`,
      (2 * config.COMPUTE_ENDPOINT_SIGNATURE_TOLERANCE_S + CLOCK_MARGIN_S) * 1000,
    );
  }

  /** Whether the call is the first with this signature on the trigger; 503 when that cannot be checked. */
  async firstUse(triggerId: string, mac: Buffer): Promise<boolean> {
    const key = `${triggerId}.${createHash('sha256').update(mac).digest('hex')}`;
    try {
      return await this.seen.firstUse(key);
    } catch (err) {
      this.logger.warn({ msg: 'signature replay check failed', triggerId, err: String(err) });
      throw new StrataException(
        ErrorCode.UNAVAILABLE,
        'The signature could not be checked against earlier calls; try again shortly.',
        undefined,
        { 'Retry-After': '1' },
      );
    }
  }
}

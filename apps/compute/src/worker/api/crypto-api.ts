import { createHmac } from 'node:crypto';
import type { JsonValue } from '@strata/sandbox';
import { ApiRefusal, stringArg, type ApiHandler } from './handler.js';

/** `api.hmacSha256(secret, message)`: the hex HMAC-SHA256 of `message` under `secret`. */
export const hmacSha256: ApiHandler = (args) =>
  Promise.resolve(
    createHmac('sha256', stringArg(args, 0, 'secret'))
      .update(messageOf(args[1]))
      .digest('hex'),
  );

/** The message to sign: any string, the empty one included. */
function messageOf(value: JsonValue | undefined): string {
  if (typeof value !== 'string') throw new ApiRefusal('message must be a string');
  return value;
}

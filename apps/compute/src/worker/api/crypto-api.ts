import { createHmac } from 'node:crypto';
import type { ApiHandler } from './handler.js';
import { stringArg } from './handler.js';

/** `api.hmacSha256(secret, message)`: the hex HMAC-SHA256 of `message` under `secret`. */
export const hmacSha256: ApiHandler = (args) =>
  Promise.resolve(
    createHmac('sha256', stringArg(args, 0, 'secret'))
      .update(typeof args[1] === 'string' ? args[1] : stringArg(args, 1, 'message'))
      .digest('hex'),
  );

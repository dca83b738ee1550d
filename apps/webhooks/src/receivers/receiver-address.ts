import { checkUrl } from '@strata/egress';

/** What a refusal of a non-public receiver adds: how an operator allows such receivers. */
export const PRIVATE_RECEIVERS_HINT =
  'the operator may allow private receivers with WEBHOOKS_ALLOW_PRIVATE_RECEIVERS=true';

/**
 * Why a receiver URL is refused before any lookup, or undefined: not an http(s)
 * URL, or (unless private receivers are allowed) `localhost`, `*.localhost` or a
 * literal address that is not global unicast, in whatever notation the URL
 * parser accepts. Names are judged again on what they resolve to, at every
 * attempt (`ReceiverClient`), since a name can point anywhere.
 */
export function refusedReceiver(url: string, allowPrivate: boolean): string | undefined {
  const refusal = checkUrl(url, { allowPrivate });
  if (!refusal) return undefined;
  return refusal.kind === 'non-public' ? `${refusal.reason} (${PRIVATE_RECEIVERS_HINT})` : refusal.reason;
}

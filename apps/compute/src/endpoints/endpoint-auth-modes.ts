import type { JsonObject } from '../json.js';
import { ENDPOINT_AUTH_MODES, type EndpointAuthMode } from '../triggers/metadata/index.js';

/** The auth modes of an endpoint trigger's stored metadata (`{mode}` or `{modes}`; bearer when absent). */
export function authModesOf(metadata: JsonObject): EndpointAuthMode[] {
  const auth = metadata['auth'];
  if (typeof auth !== 'object' || auth === null || Array.isArray(auth)) return ['bearer'];
  const listed = Array.isArray(auth['modes']) ? auth['modes'] : [auth['mode']];
  const modes = listed.filter((m): m is EndpointAuthMode => (ENDPOINT_AUTH_MODES as readonly unknown[]).includes(m));
  return modes.length > 0 ? modes : ['bearer'];
}

/** Identifier formats of the specification. */
export const ID_FORMATS = {
  workspaceSlug: /^[a-z0-9]+(?:-[a-z0-9]+)*$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i,
  clientId: /^ci_[0-9a-f]{24}$/,
  clientSecret: /^sk_[0-9a-f]{64}$/,
  publishableKey: /^pk_live_[A-Za-z0-9_-]{32,}$/,
  webhookSecret: /^whsec_[A-Za-z0-9+/_-]+=*$/,
  orchestrationId: /^orch_[0-9A-HJKMNP-TV-Z]{20}$/,
  orchestrationRunId: /^orun_[0-9A-HJKMNP-TV-Z]{20}$/,
  orchestrationStepId: /^ostep_[0-9A-HJKMNP-TV-Z]{20}$/,
  inboundEventId: /^ievt_[0-9A-HJKMNP-TV-Z]{20}$/,
} as const;

/**
 * Any UUID in its 8-4-4-4-12 hex form, whatever its version (nil, v7 and the
 * rest): our ids are version 4, but another valid UUID is an id that names
 * nothing here (404), not a malformed one; and PostgreSQL's `uuid` takes it.
 */
export const ANY_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const WORKSPACE_SLUG_MAX_LENGTH = 63;

/** Whether `value` is a workspace slug: the format and the length the platform accepts. */
export function isWorkspaceSlug(value: string): boolean {
  return value.length <= WORKSPACE_SLUG_MAX_LENGTH && ID_FORMATS.workspaceSlug.test(value);
}

/** The path of an endpoint trigger, an http-trigger or an orchestration webhook: one URL segment of letters, digits, `-` and `_`. */
export const TRIGGER_PATH = /^[A-Za-z0-9_-]{1,100}$/;

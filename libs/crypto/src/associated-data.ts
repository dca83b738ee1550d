/**
 * What each value sealed with the key ring is for: one namespace per purpose, so
 * an envelope of one purpose never opens as another's, whatever its fields hold
 * (a trigger parameter named like the trigger's signing secret, say). A new kind
 * of sealed value gets a purpose of its own here (docs/architecture.md, "Sealed values").
 */
export const SEAL_PURPOSES = {
  /** A trigger's `{value, encrypt: true}` parameter. Fields: trigger id, parameter name. */
  triggerParam: 'compute.trigger.param',
  /** An http-trigger's signing secret; compute seals it, inbound opens it. Fields: trigger id. */
  triggerSigningSecret: 'compute.trigger.signing-secret',
  /** A trigger draft's encrypted parameter. Fields: draft id, parameter name. */
  draftParam: 'compute.draft.param',
  /** A trigger draft's signing secret. Fields: draft id. */
  draftSigningSecret: 'compute.draft.signing-secret',
  /** A run's parameters (trigger parameters opened, the invocation's input). Fields: run id. */
  runParams: 'compute.run.params',
  /** A document a run stored (`api.storeAsJSON`). Fields: document id. */
  runDocument: 'compute.run.document',
  /** An endpoint trigger's hmac signing secret. Fields: trigger id. */
  endpointSigningSecret: 'compute.endpoint.signing-secret',
  /** A captured arrival's body. Fields: arrival id. */
  arrivalPayload: 'inbound.arrival.payload',
  /** A captured arrival's headers. Fields: arrival id. */
  arrivalHeaders: 'inbound.arrival.headers',
  /** An orchestration trigger's signing secret. Fields: orchestration id. */
  orchestrationSigningSecret: 'orchestration.trigger.signing-secret',
  /** A webhook subscription's secret (current or previous). Fields: subscription id. */
  webhookSubscriptionSecret: 'webhooks.subscription.secret',
  /** A token-signing key's private half. Fields: kid. */
  signingKey: 'auth.signing-key',
  /** A named secret of the OIDC provider (its cookie keys). Fields: name. */
  providerSecret: 'auth.provider-secret',
  /** A record's secret field. Fields: collection id, record id, field path. */
  recordSecret: 'data.record.secret',
  /** A storage bucket's signed-link key. Fields: workspace, bucket name. */
  storageLinkKey: 'storage.bucket.link-key',
} as const;

export type SealPurpose = (typeof SEAL_PURPOSES)[keyof typeof SEAL_PURPOSES];

/** The scheme's name, first of every associated data: no binding written before it starts so. */
const SCHEME = 'strata-aad/1';

/**
 * The associated data binding a sealed value to its purpose and place: the
 * scheme, the purpose and each field as `<UTF-8 byte length>:<field>,`, so
 * that no two (purpose, fields) lists give the same bytes (`a:b` + `c` is
 * not `a` + `b:c`). A field that is not well-formed Unicode (a lone
 * surrogate, which UTF-8 cannot tell from U+FFFD) is refused: callers refuse
 * such names at their boundary.
 */
export function associatedData(purpose: SealPurpose, ...fields: readonly string[]): string {
  return [SCHEME, purpose, ...fields]
    .map((field) => {
      if (!field.isWellFormed()) throw new TypeError('associated data fields must be well-formed Unicode');
      return `${Buffer.byteLength(field, 'utf8')}:${field},`;
    })
    .join('');
}

/**
 * Where a value is sealed: the associated data it is sealed with now, and the
 * ones earlier releases sealed it with, still opened (`KeyRing.unseal`) until
 * the upgrade step re-seals them (`KeyRing.reseal`; docs/runbooks.md).
 */
export interface Binding {
  readonly aad: string;
  readonly legacy: readonly string[];
}

/** The associated data to try, the current one first. */
export function bindingCandidates(binding: Binding): readonly string[] {
  return binding.legacy.length ? [binding.aad, ...binding.legacy] : [binding.aad];
}

/**
 * An http-trigger's signing secret: sealed by compute, opened by inbound to
 * verify arrivals (both use this). Earlier releases sealed it among the
 * trigger's parameters, under the name `#signingSecret`.
 */
export function triggerSigningSecretBinding(triggerId: string): Binding {
  return {
    aad: associatedData(SEAL_PURPOSES.triggerSigningSecret, triggerId),
    legacy: [`compute.triggers.params:${triggerId}:#signingSecret`],
  };
}

import { Collections } from './collections/collections.js';
import { ComputeFunctions } from './compute-functions/compute-functions.js';
import { Drafts } from './drafts/drafts.js';
import { Endpoints } from './endpoints/endpoints.js';
import { FunctionRuns } from './function-runs/function-runs.js';
import { FunctionTriggers } from './function-triggers/function-triggers.js';
import { clientCredentials, staticToken, type TokenSource } from './http/token-source.js';
import { Transport, warnOncePerDeprecation, type DeprecationNotice, type TransportOptions } from './http/transport.js';
import { Groups } from './iam/groups.js';
import { ServiceAccounts } from './iam/service-accounts.js';
import { Workspaces } from './iam/workspaces.js';
import { InboundEvents } from './inbound-events/inbound-events.js';
import { Orchestrations } from './orchestrations/orchestrations.js';
import { Queries } from './queries/queries.js';
import { Records } from './records/records.js';
import { SavedQueries } from './saved-queries/saved-queries.js';
import { WebhookSubscriptions } from './webhook-subscriptions/webhook-subscriptions.js';

const WORKSPACE_SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export interface StrataClientOptions extends Omit<TransportOptions, 'tokens'> {
  /** `{base_url}`: the gateway (or the Ingress in front of it). */
  readonly baseUrl: string;
  /** `{auth_url}`: the auth service (tokens, service accounts, groups). */
  readonly authUrl: string;
  /** The workspace every call addresses. */
  readonly workspace: string;
  /**
   * A bearer token, a TokenSource, or a service account's credentials (tokens are then
   * fetched with the client-credentials grant and renewed before they expire).
   */
  readonly auth: string | TokenSource | { clientId: string; clientSecret: string; scope?: string };
}

/** A client of one workspace: every resource of the spec, under the spec's names. */
export class StrataClient {
  readonly workspace: string;
  readonly collections: Collections;
  readonly records: Records;
  /** The string query language (`POST {data_base}/query`). */
  readonly queries: Queries;
  readonly savedQueries: SavedQueries;
  readonly computeFunctions: ComputeFunctions;
  readonly drafts: Drafts;
  readonly functionTriggers: FunctionTriggers;
  readonly functionRuns: FunctionRuns;
  /** Calls of endpoint triggers (`{data_base}/endpoints/{path}`), with any of their auth modes. */
  readonly endpoints: Endpoints;
  readonly orchestrations: Orchestrations;
  readonly webhookSubscriptions: WebhookSubscriptions;
  readonly inboundEvents: InboundEvents;
  readonly serviceAccounts: ServiceAccounts;
  readonly groups: Groups;
  /** Workspaces of the caller (a user token). */
  readonly workspaces: Workspaces;
  private readonly onDeprecation: (notice: DeprecationNotice) => void;

  constructor(options: StrataClientOptions) {
    if (!WORKSPACE_SLUG.test(options.workspace)) {
      throw new TypeError(`Invalid workspace slug '${options.workspace}': lowercase letters, digits and hyphens`);
    }
    this.workspace = options.workspace;
    const { baseUrl, authUrl, workspace: _workspace, auth: _auth, ...transport } = options;
    const tokens = tokenSourceOf(options);
    this.onDeprecation = transport.onDeprecation ?? warnOncePerDeprecation();
    const base = new Transport(baseUrl, { ...transport, tokens, onDeprecation: this.onDeprecation });
    const auth = new Transport(authUrl, { ...transport, tokens, onDeprecation: this.onDeprecation });
    const ws = encodeURIComponent(options.workspace);
    const data = `/data/workspace/${ws}/api/v1`;
    const iam = `/workspace/${ws}/api/v1`;
    this.collections = new Collections(base, data);
    this.records = new Records(base, data);
    this.queries = new Queries(base, data);
    this.savedQueries = new SavedQueries(base, data);
    this.computeFunctions = new ComputeFunctions(base, data);
    this.drafts = new Drafts(base, data);
    this.functionTriggers = new FunctionTriggers(base, data);
    this.functionRuns = new FunctionRuns(base, data);
    this.endpoints = new Endpoints(base, data);
    this.orchestrations = new Orchestrations(base, `/orchestration/ws/${ws}/api/v1`);
    this.webhookSubscriptions = new WebhookSubscriptions(base, data);
    this.inboundEvents = new InboundEvents(base, data);
    this.serviceAccounts = new ServiceAccounts(auth, iam);
    this.groups = new Groups(auth, iam);
    this.workspaces = new Workspaces(auth, '/workspace/api/v1');
  }

  /** @deprecated since 6.0.0: the same object as `savedQueries`. */
  get smartQueries(): SavedQueries {
    this.warnRenamed('client.smartQueries', 'client.savedQueries');
    return this.savedQueries;
  }

  /** @deprecated since 6.0.0: renamed `functionRuns`. */
  get runs(): FunctionRuns {
    this.warnRenamed('client.runs', 'client.functionRuns');
    return this.functionRuns;
  }

  private warnRenamed(name: string, successor: string): void {
    this.onDeprecation({ kind: 'name', name, successor, since: '6.0.0' });
  }
}

/** A client of one workspace. */
export function createStrataClient(options: StrataClientOptions): StrataClient {
  return new StrataClient(options);
}

function tokenSourceOf(options: StrataClientOptions): TokenSource {
  const { auth } = options;
  if (typeof auth === 'string') return staticToken(auth);
  if ('token' in auth) return auth;
  return clientCredentials({
    authUrl: options.authUrl,
    clientId: auth.clientId,
    clientSecret: auth.clientSecret,
    ...(auth.scope ? { scope: auth.scope } : {}),
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
  });
}

import type { JsonValue } from '../http/resource.js';

export type SignatureResult = 'verified' | 'rejected' | 'unsigned';
export type DispatchStatus = 'received' | 'queued' | 'dispatched' | 'dropped_dispatch';

export interface InboundEvent {
  readonly id: string;
  readonly triggerId: string;
  readonly sourceName: string | null;
  readonly functionId: string | null;
  readonly signatureResult: SignatureResult;
  readonly signatureScheme: string | null;
  readonly dispatchStatus: DispatchStatus;
  readonly dispatchError: string | null;
  readonly correlationId: string | null;
  readonly replayedFrom: string | null;
  readonly runId: string | null;
  readonly persistStatus: string | null;
  readonly persistedRecordId: string | null;
  readonly persistError: string | null;
  readonly contentType: string | null;
  readonly bodyBytes: number;
  readonly receivedAt: string;
  readonly dispatchedAt: string | null;
}

/** The detail: the body and headers only for callers holding `secrets:reveal`. */
export interface InboundEventDetail extends InboundEvent {
  readonly body?: JsonValue;
  readonly headers?: Record<string, string>;
  readonly payloadRedacted?: boolean;
}

export interface InboundEventListQuery {
  readonly limit?: number;
  readonly offset?: number;
  readonly triggerId?: string;
  readonly signatureResult?: SignatureResult;
  readonly dispatchStatus?: DispatchStatus;
  readonly since?: string;
  readonly until?: string;
}

export interface Replay {
  readonly inboundEventId: string;
  readonly correlationId: string;
  readonly replayedFrom: string;
  readonly dispatchStatus: DispatchStatus;
  readonly executionId?: string;
}

export interface BulkReplayQuery {
  readonly triggerId?: string;
  readonly dispatchStatus?: DispatchStatus;
  readonly since?: string;
  readonly until?: string;
  readonly limit?: number;
}

export interface BulkReplay {
  readonly matched: number;
  readonly queued: number;
  readonly dropped: number;
  readonly replays: { inboundEventId: string; replayedFrom: string; dispatchStatus: DispatchStatus; error?: string }[];
}

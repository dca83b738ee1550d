import type { InboundEventEntity } from '../events/inbound-event.entity.js';

/** A list row: the spec's fields and what became of the dispatch; never the body or the headers. */
export function inboundEventRow(e: InboundEventEntity) {
  return {
    id: e.id,
    triggerId: e.triggerId,
    sourceName: e.sourceName,
    functionId: e.functionId,
    signatureResult: e.signatureResult,
    signatureScheme: e.signatureScheme,
    dispatchStatus: e.dispatchStatus,
    dispatchError: e.dispatchError,
    correlationId: e.correlationId,
    replayedFrom: e.replayedFrom,
    runId: e.runId,
    persistStatus: e.persistStatus,
    persistedRecordId: e.persistedRecordId,
    persistError: e.persistError,
    contentType: e.contentType,
    bodyBytes: e.bodyBytes,
    receivedAt: e.receivedAt.toISOString(),
    dispatchedAt: e.dispatchedAt?.toISOString() ?? null,
  };
}

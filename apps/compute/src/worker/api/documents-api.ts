import { randomUUID } from 'node:crypto';
import type { KeyRing } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import type { ComputeConfig } from '../../compute.config.js';
import { sealDocument } from '../../run-documents/run-document-seal.js';
import type { RunDocumentsRepository } from '../../run-documents/run-documents.repository.js';
import { ApiRefusal, type ApiHandler } from './handler.js';

const MAX_NAME = 200;

/**
 * `api.storeAsJSON([name,] value)`: keeps `value` as a JSON document of this run,
 * sealed with the key ring, for COMPUTE_DOCUMENT_TTL_HOURS; read back with
 * `GET /function-runs/{runId}/documents[/{id}]`. Answers `{id, name, sizeBytes, expiresAt}`.
 */
export function documentHandlers(
  documents: RunDocumentsRepository,
  ring: KeyRing,
  config: ComputeConfig,
  scope: WorkspaceScope,
  runId: string,
  now: () => Date,
): Record<string, ApiHandler> {
  return {
    storeAsJSON: async (args) => {
      const named = args.length >= 2;
      const name = named ? args[0] : 'document';
      if (typeof name !== 'string' || name === '' || name.length > MAX_NAME) {
        throw new ApiRefusal(`name must be a string of 1 to ${MAX_NAME} characters`);
      }
      const value = named ? args[1] : args[0];
      if (value === undefined) throw new ApiRefusal('value is required');
      const json = JSON.stringify(value);
      const sizeBytes = Buffer.byteLength(json, 'utf8');
      const id = randomUUID();
      const createdAt = now();
      const expiresAt = new Date(createdAt.getTime() + config.COMPUTE_DOCUMENT_TTL_HOURS * 3_600_000);
      const stored = await documents.insert(
        scope,
        { id, runId, name, sealed: sealDocument(ring, id, json), sizeBytes, createdAt, expiresAt },
        { maxCount: config.COMPUTE_DOCUMENTS_PER_RUN, maxBytes: config.COMPUTE_DOCUMENT_BYTES_PER_RUN },
      );
      if (!stored) {
        throw new ApiRefusal(
          `a run keeps at most ${config.COMPUTE_DOCUMENTS_PER_RUN} documents of ${config.COMPUTE_DOCUMENT_BYTES_PER_RUN} bytes together`,
        );
      }
      return { id, name, sizeBytes, expiresAt: expiresAt.toISOString() };
    },
  };
}

import { Injectable } from '@nestjs/common';
import type { KeyRing } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { Clock, keyRingOf, StrataException } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { RunsRepository } from '../runs/runs.repository.js';
import { RUN_NOT_FOUND } from '../runs/runs.service.js';
import { openDocument } from './run-document-seal.js';
import type { RunDocumentEntity } from './run-document.entity.js';
import { RunDocumentsRepository } from './run-documents.repository.js';

const summary = (d: Omit<RunDocumentEntity, 'content'>) => ({
  id: d.id,
  runId: d.runId,
  name: d.name,
  sizeBytes: d.sizeBytes,
  createdAt: d.createdAt.toISOString(),
  expiresAt: d.expiresAt.toISOString(),
});

/** Reading back what runs kept with `api.storeAsJSON`. */
@Injectable()
export class RunDocumentsService {
  private readonly ring: KeyRing;

  constructor(
    private readonly documents: RunDocumentsRepository,
    private readonly runs: RunsRepository,
    private readonly clock: Clock,
    config: ComputeConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  async list(scope: WorkspaceScope, runId: string) {
    if (!(await this.runs.find(scope, runId))) throw StrataException.notFound(RUN_NOT_FOUND);
    return { documents: (await this.documents.list(scope, runId, this.clock.now())).map(summary) };
  }

  async get(scope: WorkspaceScope, runId: string, id: string) {
    const found = await this.documents.find(scope, runId, id, this.clock.now());
    if (!found) throw StrataException.notFound('Document not found.');
    return { ...summary(found), content: JSON.parse(openDocument(this.ring, found.id, found.content)) as unknown };
  }
}

import { Injectable } from '@nestjs/common';
import { ErrorCode, type PersistOutcome } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import type { JsonObject } from '../json.js';
import { DataApi } from '../worker/api/data-api.js';

const FIELD = 'triggerMetadata.autoPersist.recordSlug';
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An http-trigger's `autoPersist`: its `recordSlug` is resolved to a collection
 * id once (through the data service's API, as the workspace's function
 * principal), and that link never changes: an update naming another collection
 * is refused; one without the block clears it. Writing an arrival as a record
 * goes through the same API and principal.
 */
@Injectable()
export class AutoPersistLinks {
  constructor(private readonly data: DataApi) {}

  /** The metadata with `autoPersist` linked (`collectionId` added), kept from `current` when it names the same slug. */
  async link(scope: WorkspaceScope, metadata: JsonObject, current: JsonObject | undefined): Promise<JsonObject> {
    const wanted = metadata['autoPersist'];
    if (!isObject(wanted) || wanted['enabled'] !== true || typeof wanted['recordSlug'] !== 'string') {
      if (!isObject(wanted)) return metadata;
      const { collectionId: _dropped, ...rest } = wanted;
      return { ...metadata, autoPersist: rest };
    }
    const slug = wanted['recordSlug'];
    const linked = current?.['autoPersist'];
    if (isObject(linked) && linked['enabled'] === true && typeof linked['collectionId'] === 'string') {
      if (linked['recordSlug'] !== slug) {
        throw StrataException.validation([
          {
            field: FIELD,
            message: `is linked to the collection ${JSON.stringify(linked['recordSlug'])} for good: update without autoPersist to clear the link, then link another collection`,
          },
        ]);
      }
      return { ...metadata, autoPersist: { enabled: true, recordSlug: slug, collectionId: linked['collectionId'] } };
    }
    const { status, body } = await this.data.request(scope, 'GET', ['structures', 'slug', slug], {
      signal: AbortSignal.timeout(10_000),
    });
    if (status === 404) {
      throw StrataException.validation([{ field: FIELD, message: `names no collection of this workspace (${slug})` }]);
    }
    const id = isObject(body) ? body['id'] : undefined;
    if (status !== 200 || typeof id !== 'string') {
      throw new StrataException(ErrorCode.UNAVAILABLE, 'The data service did not resolve the autoPersist collection.');
    }
    return { ...metadata, autoPersist: { enabled: true, recordSlug: slug, collectionId: id } };
  }

  /** Writes an arrival's body as a record of the linked collection; never throws. */
  async persist(scope: WorkspaceScope, collectionId: string, body: unknown): Promise<PersistOutcome> {
    if (!isObject(body)) {
      return { status: 'failed', error: 'The body is not a JSON object, so it cannot be a record.' };
    }
    try {
      const created = await this.data.request(scope, 'POST', ['records'], {
        body: { structureId: collectionId, data: body },
        signal: AbortSignal.timeout(10_000),
      });
      const id = isObject(created.body) ? created.body['id'] : undefined;
      if (created.status >= 200 && created.status < 300 && typeof id === 'string') {
        return { status: 'succeeded', recordId: id };
      }
      return {
        status: 'failed',
        error: `The data service answered ${created.status}: ${JSON.stringify(created.body).slice(0, 500)}`,
      };
    } catch (err) {
      return { status: 'failed', error: `The data service could not be reached: ${String(err)}` };
    }
  }
}

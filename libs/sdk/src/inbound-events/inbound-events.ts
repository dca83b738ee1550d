import { ITERATOR_PAGE_SIZE as SIZE, walkPages } from '../http/pages.js';
import { Resource, segment, type CallOptions } from '../http/resource.js';
import type {
  BulkReplay,
  BulkReplayQuery,
  InboundEvent,
  InboundEventDetail,
  InboundEventListQuery,
  Replay,
} from './types.js';

/** `{data_base}/inbound-events`: captured HTTP-trigger arrivals, and their replay. */
export class InboundEvents extends Resource {
  list(
    query: InboundEventListQuery = {},
    options?: CallOptions,
  ): Promise<{ data: InboundEvent[]; meta: { total: number; limit: number; offset: number } }> {
    return this.read('/inbound-events', { ...query }, options);
  }

  /** Every captured arrival the filters match, newest first, page after page (by offset: see `walkPages`). */
  iterate(
    query: Omit<InboundEventListQuery, 'limit' | 'offset'> = {},
    options?: CallOptions,
  ): AsyncGenerator<InboundEvent> {
    return walkPages(SIZE, async (index) => {
      const page = await this.list({ ...query, limit: SIZE, offset: index * SIZE }, options);
      return { items: page.data, total: page.meta.total };
    });
  }

  get(id: string, options?: CallOptions): Promise<{ data: InboundEventDetail }> {
    return this.read(`/inbound-events/${segment(id)}`, undefined, options);
  }

  /** Dispatches the stored arrival again (202); the id is an inbound event's, not a run's. */
  replay(id: string, options?: CallOptions): Promise<{ data: Replay }> {
    return this.call('POST', `/inbound-events/${segment(id)}/replay`, { signal: options?.signal });
  }

  /** Replays every arrival the filter matches (202). */
  replayMatching(query: BulkReplayQuery, options?: CallOptions): Promise<{ data: BulkReplay }> {
    return this.call('POST', '/inbound-events/replay', { body: query, signal: options?.signal });
  }
}

/** Items per page of the iterators: every list the platform pages allows 100. */
export const ITERATOR_PAGE_SIZE = 100;

/** One page of a list, as `walkPages` needs it. */
export interface ListPage<T> {
  readonly items: readonly T[];
  /** Every match, when the list answers it. */
  readonly total?: number | undefined;
}

/**
 * Every item of a list that pages by number or offset, page after page of
 * `size`, from the first: it stops at a page shorter than `size`, once `total`
 * items have been read, or at a full page with nothing new on it (a list that
 * answers the same page whatever is asked). `fetchPage(index)` asks for page
 * `index` (from 0; a page-numbered list asks for `index + 1`, an offset list
 * for `index * size`).
 *
 * A walk is not a snapshot: an item created meanwhile on an earlier page pushes
 * the others back, and the items at a page's end come again at the top of the
 * next one. Those (by `id`) are yielded once: the ids of the page before are
 * kept, so memory stays that of two pages however long the walk. An item
 * deleted meanwhile can move one not yet seen onto a page already read, and it
 * is missed. The records iterators page by keyset cursor instead, which neither
 * repeats nor misses.
 */
export async function* walkPages<T>(
  size: number,
  fetchPage: (index: number) => Promise<ListPage<T>>,
): AsyncGenerator<T> {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`page size must be a positive integer, not ${size}`);
  let previous = new Set<unknown>();
  let read = 0;
  for (let index = 0; ; index++) {
    const { items, total } = await fetchPage(index);
    const ids = new Set<unknown>();
    let fresh = 0;
    for (const item of items) {
      const id = idOf(item);
      if (id !== undefined) {
        ids.add(id);
        if (previous.has(id)) continue;
      }
      fresh++;
      yield item;
    }
    read += items.length;
    if (items.length < size || (total !== undefined && read >= total) || fresh === 0) return;
    previous = ids;
  }
}

function idOf(item: unknown): unknown {
  return typeof item === 'object' && item !== null && 'id' in item ? item.id : undefined;
}

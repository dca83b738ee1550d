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
 * `size`, from the first: it stops at a page shorter than `size` or once
 * `total` items have been seen. `fetchPage(index)` asks for page `index` (from
 * 0; a page-numbered list asks for `index + 1`, an offset list for `index * size`).
 *
 * A walk is not a snapshot: an item created meanwhile on an earlier page pushes
 * the others back, and the item at a page's end comes again on the next page.
 * Items carrying an `id` are yielded once per walk; one deleted meanwhile can
 * move an item not yet seen onto a page already read, and it is missed. The
 * records iterators page by keyset cursor instead, which neither repeats nor misses.
 */
export async function* walkPages<T>(
  size: number,
  fetchPage: (index: number) => Promise<ListPage<T>>,
): AsyncGenerator<T> {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`page size must be a positive integer, not ${size}`);
  const seen = new Set<unknown>();
  let read = 0;
  for (let index = 0; ; index++) {
    const { items, total } = await fetchPage(index);
    for (const item of items) {
      const id = idOf(item);
      if (id !== undefined) {
        if (seen.has(id)) continue;
        seen.add(id);
      }
      yield item;
    }
    read += items.length;
    if (items.length < size || (total !== undefined && read >= total)) return;
  }
}

function idOf(item: unknown): unknown {
  return typeof item === 'object' && item !== null && 'id' in item ? item.id : undefined;
}

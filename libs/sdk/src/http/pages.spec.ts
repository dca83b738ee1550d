import { describe, expect, it } from '@jest/globals';
import { walkPages, type ListPage } from './pages.js';

/** A list of `items` served `size` at a time, recording which pages were asked for. */
function served<T>(items: T[], size: number, withTotal = true) {
  const asked: number[] = [];
  const fetchPage = (index: number): Promise<ListPage<T>> => {
    asked.push(index);
    const page = items.slice(index * size, index * size + size);
    return Promise.resolve(withTotal ? { items: page, total: items.length } : { items: page });
  };
  return { asked, fetchPage };
}

async function all<T>(walk: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of walk) out.push(item);
  return out;
}

describe('walkPages', () => {
  it('yields every item in order, stopping at a short page without asking for another', async () => {
    const { asked, fetchPage } = served([1, 2, 3, 4, 5], 2, false);
    expect(await all(walkPages(2, fetchPage))).toEqual([1, 2, 3, 4, 5]);
    expect(asked).toEqual([0, 1, 2]);
  });

  it('stops once the total is reached, though the last page is full', async () => {
    const { asked, fetchPage } = served([1, 2, 3, 4], 2);
    expect(await all(walkPages(2, fetchPage))).toEqual([1, 2, 3, 4]);
    expect(asked).toEqual([0, 1]);
  });

  it('asks for one empty page after full pages when the list answers no total', async () => {
    const { asked, fetchPage } = served([1, 2, 3, 4], 2, false);
    expect(await all(walkPages(2, fetchPage))).toEqual([1, 2, 3, 4]);
    expect(asked).toEqual([0, 1, 2]);
  });

  it('yields an item with an id once when a creation pushed it onto the next page', async () => {
    // Newest first: 'c' arrives after the first page was read, and 'b' is read again at the top of page 2.
    const pages = [[{ id: 'a' }, { id: 'b' }], [{ id: 'b' }, { id: 'x' }], [{ id: 'y' }]];
    const ids = await all(walkPages(2, (index) => Promise.resolve({ items: pages[index] ?? [] })));
    expect(ids.map((i) => i.id)).toEqual(['a', 'b', 'x', 'y']);
  });

  it('ends at a full page with nothing new on it, rather than walk a list that ignores the page asked for', async () => {
    let asked = 0;
    const same = () => {
      asked++;
      return Promise.resolve({ items: [{ id: 'a' }, { id: 'b' }] });
    };
    expect((await all(walkPages(2, same))).map((i) => i.id)).toEqual(['a', 'b']);
    expect(asked).toBe(2);
  });

  it('stops at the first empty page, and refuses a page size that is not a positive integer', async () => {
    expect(await all(walkPages(3, () => Promise.resolve({ items: [] })))).toEqual([]);
    await expect(all(walkPages(0, () => Promise.resolve({ items: [] })))).rejects.toThrow(RangeError);
    await expect(all(walkPages(1.5, () => Promise.resolve({ items: [] })))).rejects.toThrow(RangeError);
  });

  it('stops when the caller breaks off, asking for no further page', async () => {
    const { asked, fetchPage } = served([1, 2, 3, 4, 5, 6], 2);
    for await (const item of walkPages(2, fetchPage)) if (item === 3) break;
    expect(asked).toEqual([0, 1]);
  });
});

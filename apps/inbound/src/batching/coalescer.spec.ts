import { describe, expect, it } from '@jest/globals';
import { Coalescer } from './coalescer.js';

/** A send whose batches are held until released, recording what each batch held. */
function held() {
  const batches: string[][] = [];
  const releases: (() => void)[] = [];
  const send = (_key: string, items: string[]) => {
    batches.push(items);
    return new Promise<string[]>((resolve) => releases.push(() => resolve(items.map((i) => `${i}!`))));
  };
  return { batches, releases, send };
}
const options = (o: Partial<{ maxInFlight: number; maxItems: number; maxBytes: number }> = {}) => ({
  id: (k: string) => k,
  maxInFlight: 1,
  maxItems: 10,
  maxBytes: 1000,
  sizeOf: (i: string) => i.length,
  ...o,
});
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Coalescer', () => {
  it('sends an item at once when idle, and batches what comes while a batch is in flight', async () => {
    const h = held();
    const c = new Coalescer(h.send, options());
    const a = c.submit('ws', 'a');
    const rest = ['b', 'c', 'd'].map((i) => c.submit('ws', i));
    expect(h.batches).toEqual([['a']]);
    h.releases[0]!();
    await expect(a).resolves.toBe('a!');
    await tick();
    expect(h.batches).toEqual([['a'], ['b', 'c', 'd']]);
    h.releases[1]!();
    await expect(Promise.all(rest)).resolves.toEqual(['b!', 'c!', 'd!']);
  });

  it('keeps each key apart, and allows maxInFlight batches at once', async () => {
    const h = held();
    const c = new Coalescer(h.send, options({ maxInFlight: 2 }));
    void c.submit('one', 'a');
    void c.submit('one', 'b');
    void c.submit('one', 'c');
    void c.submit('two', 'x');
    expect(h.batches).toEqual([['a'], ['b'], ['x']]);
  });

  it('caps a batch by items and by bytes, but always sends at least one item', async () => {
    const h = held();
    const c = new Coalescer(h.send, options({ maxItems: 2, maxBytes: 5 }));
    void c.submit('ws', 'first');
    for (const i of ['aa', 'bb', 'cc', 'toolong']) void c.submit('ws', i);
    h.releases[0]!();
    await tick();
    h.releases[1]!();
    await tick();
    h.releases[2]!();
    await tick();
    expect(h.batches).toEqual([['first'], ['aa', 'bb'], ['cc'], ['toolong']]);
  });

  it('fails every item of a batch that fails, and goes on with the next', async () => {
    let calls = 0;
    const c = new Coalescer(async (_k: string, items: string[]) => {
      calls++;
      if (calls === 1) throw new Error('compute unavailable');
      return items;
    }, options());
    const first = c.submit('ws', 'a');
    const second = c.submit('ws', 'b');
    await expect(first).rejects.toThrow('compute unavailable');
    await expect(second).resolves.toBe('b');
  });
});

import { describe, expect, it } from '@jest/globals';
import { Batcher } from './batcher.js';

/** A send whose batches are held until released (answered or failed), recording what each batch held. */
function held() {
  const batches: string[][] = [];
  const answers: ((ok: boolean) => void)[] = [];
  const send = (_key: string, items: readonly string[]) => {
    batches.push([...items]);
    return new Promise<string[]>((resolve, reject) =>
      answers.push((ok) => (ok ? resolve(items.map((i) => `${i}!`)) : reject(new Error('statement failed')))),
    );
  };
  return { batches, answers, send };
}
const options = (o: Partial<{ maxInFlight: number; maxItems: number; maxBytes: number }> = {}) => ({
  id: (k: string) => k,
  maxInFlight: 1,
  maxItems: 10,
  maxBytes: 1000,
  sizeOf: (i: string) => i.length,
  // Items are "<run>" or "<run>/<mark>": one run's items never share a batch.
  distinct: (i: string) => i.split('/')[0]!,
  ...o,
});
/** Lets settled promises' reactions run (no timer involved in the batcher itself). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Batcher', () => {
  it('sends a lone item at once, and what comes while a batch is out together when it returns', async () => {
    const h = held();
    const b = new Batcher(h.send, options());
    const a = b.submit('ws', 'a');
    const rest = ['b', 'c', 'd'].map((i) => b.submit('ws', i));
    expect(h.batches).toEqual([['a']]);
    h.answers[0]!(true);
    await expect(a).resolves.toBe('a!');
    expect(h.batches).toEqual([['a'], ['b', 'c', 'd']]);
    h.answers[1]!(true);
    await expect(Promise.all(rest)).resolves.toEqual(['b!', 'c!', 'd!']);
    expect(b.sent).toEqual({ batches: 2, items: 4 });
    expect(b.waiting).toBe(0);
  });

  it('keeps maxInFlight batches out per key, and keys apart', () => {
    const h = held();
    const b = new Batcher(h.send, options({ maxInFlight: 2 }));
    for (const i of ['a', 'b', 'c', 'd']) void b.submit('ws', i);
    void b.submit('other', 'x');
    expect(h.batches).toEqual([['a'], ['b'], ['x']]);
    expect(b.waiting).toBe(2);
  });

  it('never puts two items of one run in a batch: the later waits for the next', async () => {
    const h = held();
    const b = new Batcher(h.send, options());
    void b.submit('ws', 'first');
    const later = ['r/1', 's', 'r/2', 't'].map((i) => b.submit('ws', i));
    h.answers[0]!(true);
    await settle();
    expect(h.batches[1]).toEqual(['r/1', 's', 't']);
    h.answers[1]!(true);
    await settle();
    expect(h.batches[2]).toEqual(['r/2']);
    h.answers[2]!(true);
    await expect(Promise.all(later)).resolves.toEqual(['r/1!', 's!', 'r/2!', 't!']);
  });

  it('caps a batch by items and by bytes, but always sends one', async () => {
    const h = held();
    const b = new Batcher(h.send, options({ maxItems: 2, maxBytes: 5 }));
    void b.submit('ws', 'first');
    for (const i of ['aaaaaaaa', 'b', 'c', 'd']) void b.submit('ws', i);
    h.answers[0]!(true);
    await settle();
    expect(h.batches[1]).toEqual(['aaaaaaaa']);
    h.answers[1]!(true);
    await settle();
    expect(h.batches[2]).toEqual(['b', 'c']);
  });

  it("calls each item's onAnswer synchronously, all of a batch before any awaiting caller resumes", async () => {
    const h = held();
    const b = new Batcher(h.send, options());
    const order: string[] = [];
    void b.submit('ws', 'first');
    const waiting = ['a', 'b'].map((i) =>
      b.submit('ws', i, (answer) => order.push(`answer ${answer}`)).then(() => order.push(`resumed ${i}`)),
    );
    h.answers[0]!(true);
    await settle();
    h.answers[1]!(true);
    await Promise.all(waiting);
    expect(order).toEqual(['answer a!', 'answer b!', 'resumed a', 'resumed b']);
  });

  it('fails every item of a failed batch, and carries on with the next', async () => {
    const h = held();
    const b = new Batcher(h.send, options());
    void b.submit('ws', 'first');
    const failed = ['a', 'b'].map((i) => b.submit('ws', i));
    h.answers[0]!(true);
    await settle();
    h.answers[1]!(false);
    for (const f of failed) await expect(f).rejects.toThrow('statement failed');
    const next = b.submit('ws', 'c');
    expect(h.batches.at(-1)).toEqual(['c']);
    h.answers[2]!(true);
    await expect(next).resolves.toBe('c!');
  });

  it('fails the items of a send that throws instead of rejecting', async () => {
    const b = new Batcher<string, string, string>(() => {
      throw new Error('no connection');
    }, options());
    await expect(b.submit('ws', 'a')).rejects.toThrow('no connection');
    expect(b.waiting).toBe(0);
  });
});

/**
 * Sends items in batches while a batch is in flight: an item that finds a free
 * slot goes at once, alone (no added latency when idle); items that come while
 * `maxInFlight` batches are out wait and go together in the next batch (at most
 * `maxItems` items and `maxBytes` of their `sizeOf`, but always at least one).
 * Each key (a workspace) has its own queue. Every item's promise settles with
 * its own answer, or with the batch's failure.
 */
export class Coalescer<K, T, R> {
  private readonly queues = new Map<string, { key: K; waiting: Waiting<T, R>[]; inFlight: number }>();

  constructor(
    private readonly send: (key: K, items: T[]) => Promise<R[]>,
    private readonly options: {
      readonly id: (key: K) => string;
      readonly maxInFlight: number;
      readonly maxItems: number;
      readonly maxBytes: number;
      readonly sizeOf: (item: T) => number;
    },
  ) {}

  submit(key: K, item: T): Promise<R> {
    const id = this.options.id(key);
    const queue = this.queues.get(id) ?? { key, waiting: [], inFlight: 0 };
    this.queues.set(id, queue);
    const answer = new Promise<R>((resolve, reject) => queue.waiting.push({ item, resolve, reject }));
    this.pump(id);
    return answer;
  }

  private pump(id: string): void {
    const queue = this.queues.get(id);
    if (!queue) return;
    while (queue.inFlight < this.options.maxInFlight && queue.waiting.length > 0) {
      const batch = this.take(queue.waiting);
      queue.inFlight++;
      this.send(
        queue.key,
        batch.map((w) => w.item),
      )
        .then(
          (answers) =>
            batch.forEach((w, i) =>
              i < answers.length ? w.resolve(answers[i]!) : w.reject(new Error('no answer for this item')),
            ),
          (err: unknown) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          queue.inFlight--;
          if (queue.inFlight === 0 && queue.waiting.length === 0) this.queues.delete(id);
          else this.pump(id);
        });
    }
  }

  /** The next batch: the oldest items, within the caps. */
  private take(waiting: Waiting<T, R>[]): Waiting<T, R>[] {
    let bytes = 0;
    let n = 0;
    while (n < waiting.length && n < this.options.maxItems) {
      const size = this.options.sizeOf(waiting[n]!.item);
      if (n > 0 && bytes + size > this.options.maxBytes) break;
      bytes += size;
      n++;
    }
    return waiting.splice(0, n);
  }
}

interface Waiting<T, R> {
  readonly item: T;
  resolve(answer: R): void;
  reject(err: unknown): void;
}

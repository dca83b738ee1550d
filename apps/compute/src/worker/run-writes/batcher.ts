/**
 * Sends items in batches while earlier batches are in flight, without a timer:
 * an item that finds a free slot goes at once, alone (a lone run waits for
 * nothing); items that come while `maxInFlight` batches of their key are out
 * wait, and go together as soon as one of those returns ("whatever is pending
 * when the previous write returns"). A batch holds at most `maxItems` items and
 * `maxBytes` of their `sizeOf` (always at least one), and never two items of
 * the same `distinct` value: the later one waits for the next batch, so a
 * statement never names one row twice. Every item's promise settles with its
 * own answer, or with its batch's failure; `onAnswer` of each item of a batch
 * is called synchronously, one after another, when the batch returns (the
 * items' follow-ups, JetStream acknowledgements say, then leave in one write).
 */
export class Batcher<K, T, R> {
  private readonly queues = new Map<string, Queue<K, T, R>>();
  /** Batches sent and items they held, for the metrics and the benchmark's notes. */
  readonly sent = { batches: 0, items: 0 };

  constructor(
    private readonly send: (key: K, items: readonly T[]) => Promise<readonly R[]>,
    private readonly options: {
      readonly id: (key: K) => string;
      readonly maxInFlight: number;
      readonly maxItems: number;
      readonly maxBytes: number;
      readonly sizeOf: (item: T) => number;
      /** Two items with the same value never share a batch (a run's id). */
      readonly distinct: (item: T) => string;
    },
  ) {}

  submit(key: K, item: T, onAnswer?: (answer: R) => void): Promise<R> {
    const id = this.options.id(key);
    let queue = this.queues.get(id);
    if (!queue) {
      queue = { key, waiting: [], inFlight: 0 };
      this.queues.set(id, queue);
    }
    const waiting = queue.waiting;
    const answer = new Promise<R>((resolve, reject) =>
      waiting.push({ item, resolve, reject, ...(onAnswer ? { onAnswer } : {}) }),
    );
    this.pump(id);
    return answer;
  }

  /** Items waiting for a batch, over every key. */
  get waiting(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.waiting.length;
    return n;
  }

  private pump(id: string): void {
    const queue = this.queues.get(id);
    if (!queue) return;
    while (queue.inFlight < this.options.maxInFlight && queue.waiting.length > 0) {
      const batch = this.take(queue);
      queue.inFlight++;
      this.sent.batches++;
      this.sent.items += batch.length;
      let sent: Promise<readonly R[]>;
      try {
        sent = this.send(
          queue.key,
          batch.map((w) => w.item),
        );
      } catch (err) {
        sent = Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      sent
        .then(
          (answers) => {
            batch.forEach((w, i) => {
              if (i >= answers.length) return w.reject(new Error('no answer for this item'));
              const answer = answers[i]!;
              try {
                w.onAnswer?.(answer);
              } finally {
                w.resolve(answer);
              }
            });
          },
          (err: unknown) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          queue.inFlight--;
          if (queue.inFlight === 0 && queue.waiting.length === 0) this.queues.delete(id);
          else this.pump(id);
        });
    }
  }

  /** The next batch: the oldest items within the caps, one per distinct value; the others keep their order. */
  private take(queue: Queue<K, T, R>): Waiting<T, R>[] {
    const batch: Waiting<T, R>[] = [];
    const left: Waiting<T, R>[] = [];
    const seen = new Set<string>();
    let bytes = 0;
    for (const w of queue.waiting) {
      if (batch.length >= this.options.maxItems) {
        left.push(w);
        continue;
      }
      const distinct = this.options.distinct(w.item);
      const size = this.options.sizeOf(w.item);
      if (seen.has(distinct) || (batch.length > 0 && bytes + size > this.options.maxBytes)) {
        left.push(w);
        continue;
      }
      seen.add(distinct);
      bytes += size;
      batch.push(w);
    }
    queue.waiting = left;
    return batch;
  }
}

interface Queue<K, T, R> {
  readonly key: K;
  waiting: Waiting<T, R>[];
  inFlight: number;
}

interface Waiting<T, R> {
  readonly item: T;
  resolve(answer: R): void;
  reject(err: unknown): void;
  readonly onAnswer?: (answer: R) => void;
}

import {
  createInbox,
  headers as natsHeaders,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';
import { injectTraceContext } from './trace-context.js';

/** One message of a batch: its payload is already text. */
export interface OutgoingMessage {
  readonly subject: string;
  readonly payload: string;
  /** Sent as `Nats-Msg-Id`: the stream drops a repeat inside its duplicate window. */
  readonly msgId?: string;
  /** Other JetStream publish headers, such as `Nats-Expected-Last-Subject-Sequence`. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface PublishResult {
  readonly seq: number;
  /** True when the stream dropped the message as a duplicate of `msgId`. */
  readonly duplicate: boolean;
}

/** No acknowledgement arrived in time: the message may or may not be stored. */
export class AckTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** JetStream's answer to a publish: a PubAck, or an error. */
interface PubAckBody {
  readonly stream?: string;
  readonly seq?: number;
  readonly duplicate?: boolean;
  readonly error?: { readonly code?: number; readonly description?: string };
}

interface Waiting {
  readonly resolve: (ack: PublishResult) => void;
  readonly reject: (err: Error) => void;
}

/**
 * Where a connection's JetStream acknowledgements arrive: one subscription on
 * `<inbox>.*`, each publish replying to its own token under it.
 */
class AckInbox {
  /** Under the connection's own inbox prefix: a service's NATS user may subscribe to its replies alone. */
  private readonly prefix: string;
  private readonly waiting = new Map<string, Waiting>();
  private readonly subscription: Subscription;
  private next = 0;

  constructor(private readonly nc: NatsConnection) {
    this.prefix = createInbox(inboxPrefixOf(nc));
    this.subscription = nc.subscribe(`${this.prefix}.*`, {
      callback: (err, msg) => (err ? this.failAll(err) : this.settle(msg)),
    });
  }

  get closed(): boolean {
    return this.subscription.isClosed();
  }

  publish(messages: readonly OutgoingMessage[], timeoutMs: number): Promise<PublishResult[]> {
    const tokens: string[] = [];
    const acks = messages.map(
      (m) =>
        new Promise<PublishResult>((resolve, reject) => {
          const token = String(++this.next);
          tokens.push(token);
          this.waiting.set(token, { resolve, reject });
          const headers = injectTraceContext(natsHeaders());
          if (m.msgId !== undefined) headers.set('Nats-Msg-Id', m.msgId);
          for (const [name, value] of Object.entries(m.headers ?? {})) headers.set(name, value);
          try {
            this.nc.publish(m.subject, m.payload, { reply: `${this.prefix}.${token}`, headers });
          } catch (err) {
            this.waiting.delete(token);
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        }),
    );
    const timer = setTimeout(() => {
      for (const token of tokens) {
        const w = this.waiting.get(token);
        this.waiting.delete(token);
        w?.reject(new AckTimeoutError(`JetStream did not acknowledge the publish within ${timeoutMs} ms`));
      }
    }, timeoutMs);
    return Promise.all(acks).finally(() => clearTimeout(timer));
  }

  private settle(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length + 1);
    const w = this.waiting.get(token);
    if (!w) return; // timed out already
    this.waiting.delete(token);
    if (msg.data.length === 0 && msg.headers?.hasError) {
      // 503: nothing listens on the subject, that is, no stream takes it.
      w.reject(new Error(`No stream accepts the subject (${msg.headers.code} ${msg.headers.description})`));
      return;
    }
    let ack: PubAckBody;
    try {
      ack = msg.json<PubAckBody>();
    } catch {
      w.reject(new Error('JetStream answered the publish with something that is not JSON'));
      return;
    }
    if (ack.error || typeof ack.seq !== 'number') {
      w.reject(new Error(`JetStream refused the publish: ${ack.error?.description ?? 'no sequence'}`));
      return;
    }
    w.resolve({ seq: ack.seq, duplicate: ack.duplicate === true });
  }

  private failAll(err: Error): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.reject(err);
  }
}

/**
 * The inbox prefix the connection was opened with (`inboxPrefix`; `_INBOX` by default). The
 * client's own request and JetStream helpers read it the same way: the interface does not show
 * the options.
 */
function inboxPrefixOf(nc: NatsConnection): string | undefined {
  return (nc as NatsConnection & { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
}

const inboxes = new WeakMap<NatsConnection, AckInbox>();

/**
 * Publishes messages to JetStream in one go, in order, and waits for every
 * acknowledgement (rejecting if one is refused or missing after `timeoutMs`).
 *
 * `js.publish` is a request per message, with its own timer, reply routing and
 * an Error object (with its stack trace) built even on success, which an
 * outbox relay pays for every record event. Here the messages are plain
 * publishes whose replies all land on one subscription per connection, under
 * one timer; the stream sees them in the order they are written to the
 * connection.
 */
export function publishAll(
  nc: NatsConnection,
  messages: readonly OutgoingMessage[],
  timeoutMs = 5000,
): Promise<PublishResult[]> {
  if (messages.length === 0) return Promise.resolve([]);
  let inbox = inboxes.get(nc);
  if (!inbox || inbox.closed) {
    inbox = new AckInbox(nc);
    inboxes.set(nc, inbox);
  }
  return inbox.publish(messages, timeoutMs);
}

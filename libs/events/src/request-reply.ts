import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';

/**
 * Answers core NATS requests on `subject` as a member of `queue` (one replica
 * answers each): the request's JSON goes to `answer`, its result goes back as
 * JSON. A failure is answered `{error: 'could not answer'}` (the asker treats it
 * as the service being unavailable), never with silence, and reported to `onError`.
 */
export function serveRequests(
  nc: NatsConnection,
  subject: string,
  queue: string,
  answer: (payload: unknown, msg: Msg) => Promise<unknown>,
  onError: (err: unknown, msg: Msg) => void,
): Subscription {
  return nc.subscribe(subject, {
    queue,
    callback: (err, msg) => {
      if (err) return;
      void (async () => {
        try {
          msg.respond(JSON.stringify(await answer(msg.json(), msg)));
        } catch (e) {
          onError(e, msg);
          msg.respond(JSON.stringify({ error: 'could not answer' }));
        }
      })();
    },
  });
}

/** A message's JSON, or undefined when it is not JSON (the receiver answers it as malformed). */
export function jsonOf(msg: Msg): unknown {
  try {
    return msg.json();
  } catch {
    return undefined;
  }
}

/** Answers a request with `answer` as JSON. */
export function respondJson(msg: Msg, answer: unknown): void {
  msg.respond(JSON.stringify(answer));
}

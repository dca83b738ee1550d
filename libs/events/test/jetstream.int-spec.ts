import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ROOT_CONTEXT, context, propagation, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventually, testNatsPrefix } from '@strata/testing';
import {
  consumeJson,
  deleteStream,
  ensureStream,
  publishAll,
  publishJson,
  type RunningConsumer,
} from '../src/index.js';

interface Ping {
  readonly n: number;
}

function parsePing(payload: unknown): Ping {
  const n = (payload as { n?: unknown } | null)?.n;
  if (typeof n !== 'number') throw new Error('not a ping');
  return { n };
}

describe('JetStream helpers against a real NATS server', () => {
  const prefix = testNatsPrefix();
  const stream = `${prefix}_events`;
  let nc: NatsConnection;
  const running: RunningConsumer[] = [];

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    await ensureStream(nc, { name: stream, subjects: [`${prefix}.>`] });
  });

  afterAll(async () => {
    await Promise.all(running.map((c) => c.stop()));
    await deleteStream(nc, stream);
    await nc.close();
    context.disable();
    propagation.disable();
  });

  it('creates a stream once and updates it in place when asked again', async () => {
    await ensureStream(nc, { name: stream, subjects: [`${prefix}.>`], maxAgeMs: 30_000 });
    const info = await (await jetstreamManager(nc)).streams.info(stream);
    expect(info.config.max_age).toBe(30_000 * 1_000_000);
    expect(info.config.duplicate_window).toBe(30_000 * 1_000_000);
    // Back to the defaults: a week of messages, a two-minute duplicate window.
    await ensureStream(nc, { name: stream, subjects: [`${prefix}.>`] });
    const restored = await (await jetstreamManager(nc)).streams.info(stream);
    expect(restored.config.duplicate_window).toBe(120_000 * 1_000_000);
  });

  it('leaves a stream as it is for a process that does not own it (reshape: false), and makes it when missing', async () => {
    const jsm = await jetstreamManager(nc);
    const other = `${prefix}_owned_elsewhere`;
    await ensureStream(nc, { name: other, subjects: [`${prefix}_owned.>`], maxAgeMs: 60_000 }, { reshape: false });
    expect((await jsm.streams.info(other)).config.max_age).toBe(60_000 * 1_000_000);
    // Asked for other settings, a consumer's NATS user could not change them (it may not): it uses the stream as it is.
    await ensureStream(nc, { name: other, subjects: [`${prefix}_owned.>`], maxAgeMs: 90_000 }, { reshape: false });
    expect((await jsm.streams.info(other)).config.max_age).toBe(60_000 * 1_000_000);
    await ensureStream(nc, { name: other, subjects: [`${prefix}_owned.>`], maxAgeMs: 90_000 });
    expect((await jsm.streams.info(other)).config.max_age).toBe(90_000 * 1_000_000);
    await deleteStream(nc, other);
  });

  it('drops a second publish with the same Nats-Msg-Id', async () => {
    const first = await publishJson(nc, `${prefix}.dedup`, { n: 1 }, 'msg-1');
    const again = await publishJson(nc, `${prefix}.dedup`, { n: 1 }, 'msg-1');
    const other = await publishJson(nc, `${prefix}.dedup`, { n: 2 }, 'msg-2');
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ seq: first.seq, duplicate: true });
    expect(other.duplicate).toBe(false);
    expect(other.seq).toBeGreaterThan(first.seq);
  });

  it('publishes a batch in order, reports repeats as duplicates, and refuses a subject no stream takes', async () => {
    const batch = [1, 2, 3].map((n) => ({
      subject: `${prefix}.batch`,
      payload: JSON.stringify({ n }),
      msgId: `b-${n}`,
    }));
    const acks = await publishAll(nc, batch);
    expect(acks.map((a) => a.duplicate)).toEqual([false, false, false]);
    expect(acks[1]!.seq).toBe(acks[0]!.seq + 1);
    expect(acks[2]!.seq).toBe(acks[0]!.seq + 2);
    // After a crash the relay sends the same events again: the stream keeps the first copies.
    const again = await publishAll(nc, [...batch, { subject: `${prefix}.batch`, payload: '{"n":4}', msgId: 'b-4' }]);
    expect(again.slice(0, 3)).toEqual(acks.map((a) => ({ seq: a.seq, duplicate: true })));
    expect(again[3]).toEqual({ seq: acks[2]!.seq + 1, duplicate: false });
    const stored = await (await jetstreamManager(nc)).streams.getMessage(stream, { seq: acks[1]!.seq });
    expect(stored?.json()).toEqual({ n: 2 });
    expect(stored?.header.get('Nats-Msg-Id')).toBe('b-2');
    await expect(
      publishAll(nc, [{ subject: `nowhere.${prefix}.x`, payload: '{}', msgId: 'x-1' }], 2000),
    ).rejects.toThrow(/No stream accepts the subject/);
  });

  it('acks handled messages, redelivers a failed one, and terminates one that does not parse', async () => {
    const seen: number[] = [];
    const errors: string[] = [];
    let failuresLeft = 1;
    running.push(
      await consumeJson(nc, {
        stream,
        durable: `${prefix}_retry`,
        filterSubject: `${prefix}.retry`,
        parse: parsePing,
        retryDelayMs: () => 50,
        onError: (err) => errors.push(String((err as Error).message)),
        handle: async (ping) => {
          if (ping.n === 2 && failuresLeft-- > 0) throw new Error('transient');
          seen.push(ping.n);
        },
      }),
    );
    await publishJson(nc, `${prefix}.retry`, { n: 1 }, 'r-1');
    await publishJson(nc, `${prefix}.retry`, { nope: true }, 'r-bad');
    await publishJson(nc, `${prefix}.retry`, { n: 2 }, 'r-2');
    await eventually(() => (seen.length === 2 ? true : undefined), 10_000);
    expect(seen.sort()).toEqual([1, 2]);
    expect(errors).toEqual(['not a ping', 'transient']);
    // Nothing is left pending: every message was acked or terminated.
    await eventually(async () => {
      const info = await (await jetstreamManager(nc)).consumers.info(stream, `${prefix}_retry`);
      return info.num_ack_pending === 0 && info.num_pending === 0 ? true : undefined;
    }, 10_000);
  });

  it('resumes a durable consumer where it stopped', async () => {
    const seen: number[] = [];
    const spec = {
      stream,
      durable: `${prefix}_durable`,
      filterSubject: `${prefix}.durable`,
      parse: parsePing,
      handle: async (ping: Ping) => {
        seen.push(ping.n);
      },
    };
    const first = await consumeJson(nc, spec);
    await publishJson(nc, `${prefix}.durable`, { n: 1 }, 'd-1');
    await eventually(() => (seen.length === 1 ? true : undefined), 10_000);
    await first.stop();
    await publishJson(nc, `${prefix}.durable`, { n: 2 }, 'd-2');
    const second = await consumeJson(nc, spec);
    running.push(second);
    await eventually(() => (seen.length === 2 ? true : undefined), 10_000);
    expect(seen).toEqual([1, 2]);
  });

  it("runs the handler inside the publisher's trace", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const spanContext = { traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED };
    let handlerTraceId: string | undefined;
    running.push(
      await consumeJson(nc, {
        stream,
        durable: `${prefix}_trace`,
        filterSubject: `${prefix}.trace`,
        parse: parsePing,
        handle: async () => {
          handlerTraceId = trace.getSpanContext(context.active())?.traceId;
        },
      }),
    );
    await context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext), () =>
      publishJson(nc, `${prefix}.trace`, { n: 1 }, 't-1'),
    );
    await eventually(() => handlerTraceId, 10_000);
    expect(handlerTraceId).toBe(traceId);
  });
});

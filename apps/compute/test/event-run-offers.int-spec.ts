import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Subscription } from '@nats-io/transport-node';
import { computeEventRunQueue, computeEventRunSubject, type EventRunReply } from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { NatsConnectionHolder } from '@strata/platform';
import { EventRunOffers } from '../src/events/event-run-offers.js';
import { eventRun } from './support/new-run.js';
import { computeTestConfig } from './support/compute-config.js';

/**
 * An event's run is offered to the event-run queue group; NATS hands the offer
 * to one member, which may be full (the offering worker itself, say). A busy
 * answer is asked again, of whichever member NATS picks next.
 */
describe('EventRunOffers against a real NATS server', () => {
  const config = computeTestConfig();
  const nats = new NatsConnectionHolder(config);
  const offers = new EventRunOffers(nats, config);
  const scope = issueWorkspaceScope('offers-a');
  let member: Subscription | undefined;

  const run = () => eventRun();

  /** A member of the group answering the offers it gets with `answers`, in order (then the last one). */
  const joinAnswering = async (answers: EventRunReply['kind'][]) => {
    const nc = await nats.get();
    let asked = 0;
    member = nc.subscribe(computeEventRunSubject(config.NATS_PREFIX), {
      queue: computeEventRunQueue(config.NATS_PREFIX),
      callback: (_err, msg) => {
        const kind = answers[Math.min(asked, answers.length - 1)]!;
        asked++;
        msg.respond(JSON.stringify({ kind }));
      },
    });
    await nc.flush();
    return () => asked;
  };

  beforeAll(() => nats.get());
  afterAll(async () => {
    member?.unsubscribe();
    await nats.onApplicationShutdown();
  });

  it('asks again after a busy answer, and the run is taken', async () => {
    const asked = await joinAnswering(['busy', 'started']);
    expect(await offers.offer(scope, run(), 'evt-1')).toBe(true);
    expect(asked()).toBe(2);
    member?.unsubscribe();
  });

  it('gives up after three busy answers: the caller queues the run', async () => {
    const asked = await joinAnswering(['busy']);
    expect(await offers.offer(scope, run(), 'evt-2')).toBe(false);
    expect(asked()).toBe(3);
    member?.unsubscribe();
  });

  it('takes a pair already started as settled, at the first answer', async () => {
    const asked = await joinAnswering(['known']);
    expect(await offers.offer(scope, run(), 'evt-3')).toBe(true);
    expect(asked()).toBe(1);
    member?.unsubscribe();
  });

  it('answers false at once when no worker is in the group', async () => {
    expect(await offers.offer(scope, run(), 'evt-4')).toBe(false);
  });
});

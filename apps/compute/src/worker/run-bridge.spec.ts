import { describe, expect, it } from '@jest/globals';
import type { JsonValue } from '@strata/sandbox';
import { ApiRefusal } from './api/handler.js';
import { RunBridge } from './run-bridge.js';

const context = { signal: new AbortController().signal };

describe('RunBridge', () => {
  it('answers with the handler, and records each call with its duration and outcome, never its arguments', async () => {
    const bridge = new RunBridge({
      hmacSha256: (args) => Promise.resolve(`mac of ${JSON.stringify(args[1])}`),
      fetchRecord: () => Promise.reject(new ApiRefusal('404: Record not found')),
      queryRecords: (_args, _ctx, notes) => {
        notes.deprecated('the old form');
        return Promise.resolve({ data: [] });
      },
    });
    await expect(bridge.call('hmacSha256', ['k', 'secret message'], context)).resolves.toBe('mac of "secret message"');
    await expect(bridge.call('fetchRecord', ['x'], context)).rejects.toThrow('404: Record not found');
    await expect(bridge.call('queryRecords', ['orders', {}], context)).resolves.toEqual({ data: [] });
    await expect(bridge.call('storeAsJSON', [{}], context)).rejects.toThrow(
      'api.storeAsJSON is not a method of the platform',
    );
    expect(bridge.recorded()).toEqual([
      { method: 'hmacSha256', startedAtMs: expect.any(Number), durationMs: expect.any(Number), ok: true },
      expect.objectContaining({ method: 'fetchRecord', ok: false, error: '404: Record not found' }),
      expect.objectContaining({ method: 'queryRecords', ok: true, deprecated: 'the old form' }),
      expect.objectContaining({ method: 'storeAsJSON', ok: false }),
    ]);
    expect(JSON.stringify(bridge.recorded())).not.toContain('secret message');
  });

  it('refuses arguments nested deeper than a request body may be, before any handler, as bad input', async () => {
    let handled = 0;
    const internal: unknown[] = [];
    const bridge = new RunBridge(
      {
        createRecord: () => {
          handled++;
          return Promise.resolve({ id: 'r1' });
        },
      },
      (_method, err) => internal.push(err),
    );
    const nested = (levels: number): JsonValue => {
      let value: JsonValue = { leaf: true };
      for (let i = 1; i < levels; i++) value = { o: value };
      return value;
    };
    // The arguments' array is level 1: a 63-level object beside the slug is the deepest allowed.
    await expect(bridge.call('createRecord', ['items', nested(63)], context)).resolves.toEqual({ id: 'r1' });
    for (const levels of [64, 5000, 100_000]) {
      await expect(bridge.call('createRecord', ['items', nested(levels)], context)).rejects.toThrow(
        'api.createRecord: its arguments nest objects and arrays deeper than 64 levels',
      );
    }
    expect(handled).toBe(1);
    expect(internal).toEqual([]);
  });

  it('awaits beforeEffect before every call but the pure ones, and refuses the call when it rejects', async () => {
    const order: string[] = [];
    let allowed = true;
    const bridge = new RunBridge(
      {
        hmacSha256: () => Promise.resolve('mac'),
        createRecord: () => {
          order.push('createRecord');
          return Promise.resolve({ id: 'r1' });
        },
      },
      undefined,
      () => {
        order.push('claim');
        return allowed ? Promise.resolve() : Promise.reject(new ApiRefusal('This run was cancelled.'));
      },
    );
    await expect(bridge.call('hmacSha256', ['k', 'm'], context)).resolves.toBe('mac');
    expect(order).toEqual([]);
    await expect(bridge.call('createRecord', ['notes', {}], context)).resolves.toEqual({ id: 'r1' });
    expect(order).toEqual(['claim', 'createRecord']);
    allowed = false;
    await expect(bridge.call('createRecord', ['notes', {}], context)).rejects.toThrow('This run was cancelled.');
    expect(order).toEqual(['claim', 'createRecord', 'claim']);
    // A method the platform does not have is refused as such, without a claim.
    await expect(bridge.call('searchRecords' as never, [], context)).rejects.toThrow('not a method of the platform');
    expect(order).toHaveLength(3);
    expect(bridge.calls.map((c) => [c.method, c.ok])).toEqual([
      ['hmacSha256', true],
      ['createRecord', true],
      ['createRecord', false],
      ['searchRecords', false],
    ]);
  });

  it('starts no call once the run has ended, and records a call the end cut off as such, not as a platform failure', async () => {
    const failures: string[] = [];
    const ended = new AbortController();
    let started = 0;
    const bridge = new RunBridge(
      {
        createRecord: (_args, { signal }) => {
          started++;
          return new Promise((_resolve, reject) =>
            signal.addEventListener('abort', () => reject(new DOMException('The run has ended', 'AbortError'))),
          );
        },
      },
      (method) => failures.push(method),
    );
    const cutOff = bridge.call('createRecord', ['notes', {}], { signal: ended.signal });
    ended.abort();
    await expect(cutOff).rejects.toThrow('The run ended before this call was answered.');
    await expect(bridge.call('createRecord', ['notes', {}], { signal: ended.signal })).rejects.toThrow(
      'The run ended before this call was answered.',
    );
    expect(started).toBe(1);
    expect(failures).toEqual([]);
    expect(bridge.calls.map((c) => c.ok)).toEqual([false, false]);
  });

  it('finds only its own handlers, not what objects inherit', async () => {
    const bridge = new RunBridge({});
    await expect(bridge.call('toString' as never, [], context)).rejects.toThrow('not a method of the platform');
    await expect(bridge.call('constructor' as never, [], context)).rejects.toThrow('not a method of the platform');
  });

  it('keeps at most 1000 call records and counts the rest', async () => {
    const bridge = new RunBridge({ hmacSha256: () => Promise.resolve('x') });
    for (let i = 0; i < 1005; i++) await bridge.call('hmacSha256', ['k', 'm'], context);
    const recorded = bridge.recorded();
    expect(recorded).toHaveLength(1001);
    expect(recorded[1000]).toEqual({ unrecordedCalls: 5 });
  });

  it("hides the platform's own failures from the function and reports them", async () => {
    const reported: string[] = [];
    const bridge = new RunBridge(
      { storeAsJSON: () => Promise.reject(new Error('inconsistent types deduced for parameter $6')) },
      (method, err) => reported.push(`${method}: ${String(err)}`),
    );
    const thrown = await bridge.call('storeAsJSON', [1], context).catch((e: unknown) => e as Error);
    expect(thrown).toBeInstanceOf(ApiRefusal);
    expect((thrown as Error).message).toBe("api.storeAsJSON failed on the platform's side; try again later.");
    expect(reported).toEqual(['storeAsJSON: Error: inconsistent types deduced for parameter $6']);
    expect(JSON.stringify(bridge.recorded())).not.toContain('inconsistent');
  });
});

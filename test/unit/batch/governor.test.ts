/**
 * The one pace (src/batch/governor.ts) that plat batch's workers and plat mcp's tool calls share: places among
 * `maxInFlight` given first come first served, a caller whose signal aborts out of the queue at once, and a pause
 * that a waiting request's own signal ends.
 */
import { describe, expect, it } from 'vitest';
import { createGovernor } from '../../../src/batch/governor.js';

describe('admit', () => {
  it('gives at most maxInFlight places, the rest in order of arrival as places come free', async () => {
    const sizes: number[] = [];
    const governor = createGovernor({ maxInFlight: 2, onQueue: (waiting) => sizes.push(waiting) });
    const order: string[] = [];
    const first = await governor.admit();
    const second = await governor.admit();
    const later = ['a', 'b', 'c'].map((name) => governor.admit().then((release) => (order.push(name), release)));
    expect(governor.waiting).toBe(3);
    first();
    first(); // a second release gives nothing away
    const a = await later[0]!;
    expect(order).toEqual(['a']);
    expect(governor.waiting).toBe(2);
    second();
    a();
    (await later[1]!)();
    (await later[2]!)();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(governor.waiting).toBe(0);
    expect(sizes).toEqual([1, 2, 3, 2, 1, 0]);
  });

  it('a caller whose signal aborts leaves the queue at once, and the next in line gets its turn', async () => {
    const governor = createGovernor({ maxInFlight: 1 });
    const holder = await governor.admit();
    const controller = new AbortController();
    const cancelled = governor.admit(controller.signal);
    const next = governor.admit();
    expect(governor.waiting).toBe(2);
    controller.abort(new Error('stop'));
    await expect(cancelled).rejects.toThrow('stop');
    expect(governor.waiting).toBe(1);
    holder();
    const release = await next;
    expect(governor.waiting).toBe(0);
    release();
    await expect(governor.admit(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });
});

describe('turn', () => {
  it('waits out a pause the server asked for, and ends at once when the request\'s own signal aborts', async () => {
    let clock = 1_000;
    const paused: Array<[number, number | undefined]> = [];
    const governor = createGovernor({ now: () => clock, onPause: (ms, status) => paused.push([ms, status]) });
    governor.pause(60_000, 429);
    governor.pause(30_000, 429); // inside the first: no new pause
    expect(paused).toEqual([[60_000, 429]]);
    expect(governor.pauses).toBe(1);
    const controller = new AbortController();
    const waiting = governor.turn(controller.signal);
    controller.abort();
    await waiting;
    clock += 60_000;
    expect(governor.paused()).toBe(false);
    await governor.turn();
  });
});

import { describe, expect, it, vi } from 'vitest';
import { createReceiver, memoryStore, type Clock } from '@payhook/core';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';

describe('manualClock', () => {
  it('is a core Clock that moves only when advanced', async () => {
    const clock: Clock = manualClock(1_000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('a'), 10);
    expect(clock.now()).toBe(1_000);
    await new Promise((r) => setImmediate(r));
    expect(fired).toEqual([]);
    expect(clock.now()).toBe(1_000);
  });

  it('runs every timer due within the window, in time order (equal times in the order set), and moves to the end of it', async () => {
    const clock = manualClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 300);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 100);
    clock.setTimeout(() => fired.push(`b1@${clock.now()}`), 200);
    clock.setTimeout(() => fired.push(`b2@${clock.now()}`), 200);
    clock.setTimeout(() => fired.push('late'), 301);
    await clock.advance(300);
    expect(fired).toEqual(['a@100', 'b1@200', 'b2@200', 'c@300']);
    expect(clock.now()).toBe(300);
    expect(clock.pending()).toBe(1);
    await clock.advance(1);
    expect(fired.at(-1)).toBe('late');
    expect(clock.pending()).toBe(0);
  });

  it('lets promise chains started by a timer set new timers that still run within the same advance', async () => {
    const clock = manualClock(0);
    const fired: number[] = [];
    const retry = async (n: number) => {
      fired.push(clock.now());
      await Promise.resolve();
      await Promise.resolve().then(() => undefined);
      if (n < 4) clock.setTimeout(() => void retry(n + 1), 250 * 2 ** n);
    };
    clock.setTimeout(() => void retry(1), 250);
    await clock.advance(250 + 500 + 1_000);
    expect(fired).toEqual([250, 750, 1_750]);
    await clock.advance(2_000);
    expect(fired).toEqual([250, 750, 1_750, 3_750]);
  });

  it('gives work started before advance a turn to set its timers', async () => {
    const clock = manualClock(0);
    let done = false;
    void (async () => {
      await Promise.resolve();
      await clock.sleep(50);
      done = true;
    })();
    await clock.advance(50);
    expect(done).toBe(true);
  });

  it('clearTimeout cancels; clearing twice or clearing a foreign handle is harmless', async () => {
    const clock = manualClock(0);
    const fired: string[] = [];
    const handle = clock.setTimeout(() => fired.push('cancelled'), 10);
    clock.setTimeout(() => fired.push('kept'), 10);
    clock.clearTimeout(handle);
    clock.clearTimeout(handle);
    clock.clearTimeout(undefined);
    clock.clearTimeout(setTimeout(() => {}, 0));
    expect(clock.pending()).toBe(1);
    await clock.advance(10);
    expect(fired).toEqual(['kept']);
  });

  it('treats a negative or NaN delay as zero', async () => {
    const clock = manualClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('negative'), -5);
    clock.setTimeout(() => fired.push('nan'), Number.NaN);
    await clock.advance(0);
    expect(fired).toEqual(['negative', 'nan']);
  });

  it('runAll runs timers until none is left, and refuses an interval that never stops', async () => {
    const clock = manualClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 60_000);
    }, 1_000);
    await clock.runAll();
    expect(fired).toEqual([1_000, 61_000]);
    expect(clock.pending()).toBe(0);

    const tick = () => void clock.setTimeout(tick, 10);
    tick();
    await expect(clock.runAll(5)).rejects.toThrow(/^\[@payhook\/testing\] clock\.runAll: timers were still pending after 5 rounds/);
  });

  it('rejects advance with the first error a timer threw, after running the rest', async () => {
    const clock = manualClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => {
      throw new Error('boom');
    }, 10);
    clock.setTimeout(() => fired.push('after'), 20);
    await expect(clock.advance(20)).rejects.toThrow('boom');
    expect(fired).toEqual(['after']);
    await expect(clock.advance(1)).resolves.toBeUndefined();
  });

  it('explains bad arguments', async () => {
    expect(() => manualClock(Number.NaN)).toThrow(/^\[@payhook\/testing\] manualClock\(start\)/);
    await expect(manualClock(0).advance(-1)).rejects.toThrow(/^\[@payhook\/testing\] clock\.advance\(ms\) takes a finite number/);
  });

  it('starts at the wall time by default, and its methods work unbound', async () => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    try {
      const { now, advance, sleep } = manualClock();
      expect(now()).toBe(1_700_000_000_000);
      const slept = sleep(5);
      // Still works under vitest's fake timers: its turns use the real event loop.
      await advance(5);
      await slept;
      expect(now()).toBe(1_700_000_000_005);
    } finally {
      vi.useRealTimers();
    }
  });

  it('drives a receiver: the budget answers 202 exactly when it runs out', async () => {
    const clock = manualClock();
    const secret = 'whsec_manual_clock';
    const receiver = createReceiver({
      secret,
      clock,
      budgetMs: 200,
      store: memoryStore({ now: clock.now }),
      logger: { warn() {}, error() {} },
    });
    receiver.on('payment.success', () => clock.sleep(600));
    let status: number | undefined;
    const answered = receiver.handle(signedRequest(createEvent('payment.success'), { secret })).then((r) => (status = r.status));
    await clock.advance(199);
    expect(status).toBeUndefined();
    await clock.advance(1);
    await answered;
    expect(status).toBe(202);
    await clock.advance(400);
    expect(clock.pending()).toBe(0);
  });
});

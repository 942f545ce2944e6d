import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock, type Clock } from '../../src/base/clock.js';
import { createDeadlines } from '../../src/base/deadlines.js';

describe('createDeadlines: one timer for all of a receiver deliveries', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** The system clock (on vitest's fake timers), counting the timers it is asked for. */
  const counting = () => {
    const armed = { count: 0 };
    const clock: Clock = {
      now: () => systemClock.now(),
      setTimeout: (cb, ms) => {
        armed.count++;
        return systemClock.setTimeout(cb, ms);
      },
      clearTimeout: (h) => systemClock.clearTimeout(h),
    };
    return { clock, armed };
  };

  it('calls each late callback once, in order of its deadline, and never a cancelled one', () => {
    const { clock } = counting();
    const deadlines = createDeadlines(clock);
    const fired: string[] = [];
    const t = clock.now();
    deadlines.add(t + 100, () => fired.push('a'));
    const b = deadlines.add(t + 150, () => fired.push('b'));
    deadlines.add(t + 120, () => fired.push('c')); // arrives out of order
    deadlines.add(t + 300, () => fired.push('d'));
    deadlines.cancel(b);

    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['a']);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(['a', 'c']);
    vi.advanceTimersByTime(1_000);
    expect(fired).toEqual(['a', 'c', 'd']);
  });

  it('keeps one clock timer armed however many deliveries wait, and none once all settle', () => {
    const { clock, armed } = counting();
    const deadlines = createDeadlines(clock);
    const t = clock.now();
    const waiting = Array.from({ length: 1_000 }, (_, i) => deadlines.add(t + 8_000 + i, () => {}));
    expect(armed.count).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    // Settled in the order they came, as fast deliveries are: nothing fires, the queue empties.
    for (const d of waiting) deadlines.cancel(d);
    vi.advanceTimersByTime(10_000);
    expect(vi.getTimerCount()).toBe(0);
    expect(armed.count).toBe(1);
  });

  it('re-arms for an earlier deadline added after a later one', () => {
    const { clock } = counting();
    const deadlines = createDeadlines(clock);
    const fired: number[] = [];
    const t = clock.now();
    deadlines.add(t + 500, () => fired.push(500));
    deadlines.add(t + 50, () => fired.push(50));
    vi.advanceTimersByTime(50);
    expect(fired).toEqual([50]);
    vi.advanceTimersByTime(450);
    expect(fired).toEqual([50, 500]);
  });
});

import type { Clock } from '@payhook/core';
import { createClock } from '@payhook/reference';

/** A timer set on a manual clock; pass it back to `clearTimeout`. */
export interface ManualTimer {
  /** The clock time it is due at. */
  readonly at: number;
}

/** Core's `Clock` on virtual time: nothing fires until the test moves the clock. */
export interface ManualClock extends Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): ManualTimer;
  /** Cancels a timer `setTimeout` gave; it never fires. */
  clearTimeout(handle: unknown): void;
  /**
   * Move time forward by `ms`, running every timer due within the window in time order (equal
   * times in the order they were set). Work already started gets one event-loop turn first, and
   * each timer's callback one turn after it runs, so a promise chain that sets a new timer inside
   * the window (a retry, a keep-alive) runs in the same call. Rejects with the first error a
   * callback threw, as an uncaught exception would have surfaced it.
   */
  advance(ms: number): Promise<void>;
  /** Advance to each pending timer in turn until none is left (throws after `limit` rounds: an interval never ends). */
  runAll(limit?: number): Promise<void>;
  /** How many timers are set and not yet run or cleared. */
  pending(): number;
  /** Resolves once the clock has been advanced by `ms`: a handler that takes `ms` of virtual time. */
  sleep(ms: number): Promise<void>;
}

// Read once, at load: a test that installs vitest's fake timers later must not freeze the turns below.
const realSetImmediate: ((callback: () => void) => unknown) | undefined = globalThis.setImmediate;
const realSetTimeout = globalThis.setTimeout;
/** One turn of the event loop: every pending microtask (a whole promise chain) has run by then. */
const turn = () => new Promise<void>((resolve) => (realSetImmediate ? realSetImmediate(resolve) : realSetTimeout(resolve, 0)));

interface Entry extends ManualTimer {
  cancel: () => void;
}

/**
 * A manual clock for `createReceiver({ clock })`, `createReconciler({ clock })` and
 * `memoryStore({ now: clock.now })`: budgets, lease keep-alives and the receiver's background
 * retries run when the test advances it, never on real time. Its timers live in the reference
 * service's virtual clock (`createClock({ mode: 'manual' })` from `@payhook/reference`); this adds
 * the `setTimeout` shape core expects and lets promise chains settle between timers. The methods
 * need no `this`: pass `clock.now` on its own.
 *
 * @param start Where time starts, in ms since the epoch. Default: the wall time at creation.
 *
 * @example
 * const clock = manualClock();
 * const receiver = createReceiver({ secret, clock, budgetMs: 200, store: memoryStore({ now: clock.now }) })
 *   .on('payment.success', () => clock.sleep(600)); // a handler that takes 600 virtual ms
 * const answer = receiver.handle(signedRequest(event, { secret }));
 * await clock.advance(200); // the budget runs out now: 202, exactly at 200 ms
 * expect((await answer).status).toBe(202);
 * await clock.advance(400); // the handler finishes and its done record is written
 */
export function manualClock(start: number = Date.now()): ManualClock {
  if (!Number.isFinite(start)) {
    throw new RangeError(`[@payhook/testing] manualClock(start) takes a time in ms since the epoch; got ${start}.`);
  }
  const timers = createClock({ mode: 'manual', startAt: start });
  const live = new Set<Entry>();
  let failure: { error: unknown } | undefined;
  const now = () => timers.now();

  const setTimeout = (callback: () => void, ms: number): ManualTimer => {
    // As in Node and browsers: a missing, negative or NaN delay means "as soon as possible".
    const at = now() + (Number.isFinite(ms) && ms > 0 ? ms : 0);
    const entry: Entry = { at, cancel: () => {} };
    entry.cancel = timers.at(at, () => {
      live.delete(entry);
      try {
        callback();
      } catch (error) {
        failure ??= { error };
      }
      // The reference clock waits for a promise a timer returns before it fires the next one.
      return turn();
    });
    live.add(entry);
    return entry;
  };

  const clearTimeout = (handle: unknown): void => {
    const entry = handle as Entry;
    if (!live.has(entry)) return;
    live.delete(entry);
    entry.cancel();
  };

  const advance = async (ms: number): Promise<void> => {
    if (!(Number.isFinite(ms) && ms >= 0)) {
      throw new RangeError(`[@payhook/testing] clock.advance(ms) takes a finite number of milliseconds >= 0; got ${ms}.`);
    }
    // Let work started before the call (a request still being read, a claim being made) set its timers.
    await turn();
    await timers.advance(ms);
    if (failure) {
      const { error } = failure;
      failure = undefined;
      throw error;
    }
  };

  return {
    now,
    setTimeout,
    clearTimeout,
    advance,
    async runAll(limit = 10_000) {
      for (let round = 0; ; round++) {
        await turn();
        let next = Infinity;
        for (const e of live) next = Math.min(next, e.at);
        if (next === Infinity) return;
        if (round >= limit) {
          throw new Error(
            `[@payhook/testing] clock.runAll: timers were still pending after ${limit} rounds, as with an interval that never stops; advance(ms) by a set amount instead.`,
          );
        }
        await advance(Math.max(0, next - now()));
      }
    },
    pending: () => live.size,
    sleep: (ms) => new Promise<void>((resolve) => void setTimeout(resolve, ms)),
  };
}

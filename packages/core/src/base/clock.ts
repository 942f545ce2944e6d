/**
 * Time, injected: the receiver, the memory store and the reconciler read the clock and set timers
 * only through one of these, so tests of budgets, leases and retries move time instead of sleeping.
 *
 * @example
 * const clock = manualClock(); // from @payhook/testing
 * const receiver = createReceiver({ secret, clock, budgetMs: 100 });
 * await clock.advance(100); // the slow handler's delivery is answered 202 now
 */
export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
  /**
   * Run `callback` after `ms`. The timer must not keep a process alive by itself, unless
   * `keepAlive` says that an answer still waits on it (a copy of an event waiting for the running one).
   */
  setTimeout(callback: () => void, ms: number, options?: { keepAlive?: boolean }): unknown;
  /** Cancel a timer `setTimeout` gave; it never fires. */
  clearTimeout(handle: unknown): void;
}

/** The real clock. Timers are read from the globals at each call, so vitest's fake timers work too. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms, options) {
    const timer = setTimeout(callback, ms);
    if (options?.keepAlive !== true) (timer as { unref?: () => void }).unref?.();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Run `callback` every `ms` on `clock` until the returned function is called. */
export function every(clock: Clock, ms: number, callback: () => void): () => void {
  let handle: unknown;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    handle = clock.setTimeout(tick, ms);
    callback();
  };
  handle = clock.setTimeout(tick, ms);
  return () => {
    stopped = true;
    clock.clearTimeout(handle);
  };
}

/**
 * The one place tests wait on the real clock (issue 32). Import it by relative path: from a root
 * test, `./support/wait.js`; from `packages/<pkg>/test/`, `../../../test/support/wait.js`.
 *
 * Most tests need neither helper: time inside payhook is injected (`manualClock` from
 * `@payhook/testing`, or vitest's fake timers), and work that ends after an answer has something
 * to await (the ledger's records, a captured `waitUntil`, a child's READY line).
 */

/**
 * Wait `ms` of real time. Only for a test whose subject runs on a clock the test cannot move: a
 * real server (Redis or Postgres expiring a lease on its own clock), another process, or a socket
 * (slowloris, a stalled upload). Say which in a comment where it is called. Never to let work
 * "settle": await the work instead, or poll for its result with `until`.
 */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface UntilOptions {
  /** Give up after this long (ms of real time). Default 5000. */
  timeoutMs?: number;
  /** Time between checks (ms). Default 10. */
  intervalMs?: number;
  /** What is awaited, for the error: a phrase, or a function that reads the state at the timeout. */
  what: string | (() => string | Promise<string>);
}

/**
 * Check `predicate` until it returns a truthy value, and resolve with that value. The first check
 * runs at once; after `timeoutMs` it rejects with `timed out after <ms> ms waiting for <what>`.
 * For results that arrive from outside the test's control: a record written after the answer, a
 * child process's effect, a server's state. The predicate's errors are thrown at once.
 *
 * @example
 * await until(async () => (await ledger.list()).length === 2, { what: 'both deliveries in the ledger' });
 * const runs = await until(async () => { const r = await runsOf(target); return r.finished > 0 && r; }, { timeoutMs: 10_000, what: 'the late handler' });
 */
export async function until<T>(
  predicate: () => T | Promise<T>,
  options: UntilOptions,
): Promise<Exclude<T, false | 0 | '' | null | undefined>> {
  const { timeoutMs = 5_000, intervalMs = 10, what } = options;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value as Exclude<T, false | 0 | '' | null | undefined>;
    if (Date.now() >= end) {
      const described = typeof what === 'function' ? await what() : what;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${described}`);
    }
    await sleep(intervalMs);
  }
}

/**
 * A platform `waitUntil` for `receiver.handle(request, { waitUntil })` that keeps what the receiver
 * hands it: after each answer the ledger writer's `idle()` (every record so far written), and a
 * handler's work past the budget. `settled()` resolves once all of it has, and anything handed over
 * meanwhile. Use it where no result can be polled for: a record that must not be written (a
 * refusal past its share, a bound that trims), or a count that a bound caps.
 */
export function captureWaitUntil(): { waitUntil: (work: Promise<unknown>) => void; settled: () => Promise<void> } {
  const held: Promise<unknown>[] = [];
  return {
    waitUntil: (work) => void held.push(work),
    async settled() {
      while (held.length > 0) await Promise.allSettled(held.splice(0));
    },
  };
}

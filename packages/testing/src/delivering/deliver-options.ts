import { DELIVERY_TIMEOUT_MS, MAX_ATTEMPTS, RETRY_DELAYS_MS } from '@payhook/reference';

/** What `deliver` takes: the secret; the rest have defaults. */
export interface DeliverOptions {
  /** The webhook secret the receiver checks against. */
  secret: string;
  /** The header to sign in, as the receiver's `signatureHeader` option. Default `X-Service-Signature`; ePay's real deliveries use `X-Epay-Signature`. */
  signatureHeader?: string;
  /** The webhook route on an app target. Default `/webhooks`. */
  path?: string;
  /** How many times each event is sent, as separate identical deliveries (same bytes, same signature). Default 1. */
  duplicates?: number;
  /** How many deliveries are in flight at once. Default 1: one after another. */
  concurrency?: number;
  /**
   * Change the order the deliveries are first sent in (copies included): `'reverse'` (or `true`)
   * sends the newest first, as the service's `reorder` fault does; `'shuffle'` uses `seed`.
   */
  reorder?: boolean | 'reverse' | 'shuffle';
  /** Seed of `reorder: 'shuffle'`, so a failing order can be replayed. Default 1. */
  seed?: number;
  /**
   * Retry an attempt that did not get a 2xx, on a virtual clock (nothing waits for real):
   * `true` (default) is the service's schedule, attempts 2 to 5 at 1, 2, 4 and 8 minutes after
   * the start of the attempt before; a list gives other delays in ms (attempts = delays + 1);
   * `false` sends each delivery once.
   */
  retrySchedule?: boolean | readonly number[];
  /** An attempt with no answer within this many real milliseconds counts as failed (status null). Default 10000, the service's timeout. */
  timeoutMs?: number;
  /**
   * Called with the virtual milliseconds before the clock moves to the next attempts, so the
   * app's own clock can follow (`vi.advanceTimersByTimeAsync(ms)`, a store's `now`).
   */
  onAdvance?: (ms: number) => unknown;
}

function wholeNumber(value: unknown, name: string, min: number, max: number): number {
  if (!(typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)) {
    throw new RangeError(`[@payhook/testing] deliver: ${name} must be a whole number from ${min} to ${max}; got ${String(value)}.`);
  }
  return value;
}

function delaysOf(schedule: DeliverOptions['retrySchedule']): readonly number[] {
  if (schedule === undefined || schedule === true) return RETRY_DELAYS_MS;
  if (schedule === false) return [];
  if (Array.isArray(schedule) && schedule.every((d) => typeof d === 'number' && Number.isFinite(d) && d >= 0)) return schedule;
  throw new TypeError(
    "[@payhook/testing] deliver: retrySchedule must be true (the service's 1, 2, 4, 8 minutes), false (no retries) or a list of delays in ms, e.g. [60000, 120000].",
  );
}

/** `DeliverOptions` checked, with the defaults filled in. */
export interface DeliverSettings {
  duplicates: number;
  concurrency: number;
  timeoutMs: number;
  /** Virtual delay before attempt 2, 3…, in ms. */
  delays: readonly number[];
  maxAttempts: number;
}

/**
 * Check `deliver`'s options and fill in the defaults (one copy, one at a time, the service's
 * timeout and retry schedule); a wrong option throws a message that says what to pass.
 *
 * @example
 * const { duplicates, delays, maxAttempts } = deliverSettings({ secret, duplicates: 3, retrySchedule: false });
 */
export function deliverSettings(options: DeliverOptions): DeliverSettings {
  if (!options || typeof options.secret !== 'string' || options.secret === '') {
    throw new TypeError('[@payhook/testing] deliver needs { secret }: the webhook secret your receiver was created with.');
  }
  const duplicates = wholeNumber(options.duplicates ?? 1, 'duplicates', 1, 1000);
  const concurrency = wholeNumber(options.concurrency ?? 1, 'concurrency', 1, 1000);
  const timeoutMs = wholeNumber(options.timeoutMs ?? DELIVERY_TIMEOUT_MS, 'timeoutMs', 1, 600_000);
  const delays = delaysOf(options.retrySchedule);
  const maxAttempts = options.retrySchedule === undefined || options.retrySchedule === true ? MAX_ATTEMPTS : delays.length + 1;
  return { duplicates, concurrency, timeoutMs, delays, maxAttempts };
}

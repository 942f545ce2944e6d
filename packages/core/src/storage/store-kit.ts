import type { Outcome } from './store.js';

/**
 * A done record's outcome as a store reads it back: `rejected`, or `failed` as records written by
 * earlier versions name it (kept as long as the retention), is `rejected`; anything else is `ok`.
 */
export const storedOutcome = (stored: unknown): Outcome => (stored === 'rejected' || stored === 'failed' ? 'rejected' : 'ok');

/** `value` as whole milliseconds, or the error that names the option; `name` starts the message (the store's package). */
export function positiveMs(value: number, option: string, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`${name} ${option} must be a positive number of milliseconds; got ${value}.`);
  }
  return Math.ceil(value);
}

/**
 * `promise`, or an error saying `no answer from <server> within <ms> ms` once `ms` have passed: a
 * store's call to a server that holds requests fails inside the receiver's budget, which then
 * answers 503. The request itself is not cancelled.
 */
export function within<T>(ms: number, promise: Promise<T>, server: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from ${server} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

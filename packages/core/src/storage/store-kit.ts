import type { Outcome } from './store-contract.js';

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

/** Where the turn of the event loop ends: after the I/O callbacks of this poll (Node, Bun, Deno), else at the next timer. */
const afterTurn: (run: () => void) => void =
  typeof setImmediate === 'function' ? (run) => void setImmediate(run) : (run) => void setTimeout(run, 0);

/**
 * One write for the calls of one turn of the event loop: each call waits until the turn ends
 * (after the I/O callbacks that made it and its neighbours), then `send` gets the inputs of every
 * call of that turn, up to `max` at a time, and resolves with one result per input, in order. A
 * store sends its claims (or its done records) as one statement this way, so that deliveries
 * arriving together share one commit. When `send` rejects, every call of its group rejects with
 * that error.
 *
 * @example
 * const claim = grouped((keys: string[]) => claimAll(keys));
 * const [a, b] = await Promise.all([claim('k1'), claim('k2')]); // one claimAll(['k1', 'k2'])
 */
export function grouped<I, O>(send: (inputs: I[]) => Promise<readonly O[]>, max = 256): (input: I) => Promise<O> {
  let inputs: I[] = [];
  let callers: { resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  const flush = () => {
    const all = inputs;
    const waiting = callers;
    inputs = [];
    callers = [];
    for (let from = 0; from < all.length; from += max) {
      const group = all.length <= max ? all : all.slice(from, from + max);
      const theirs = all.length <= max ? waiting : waiting.slice(from, from + max);
      let sent: Promise<readonly O[]>;
      try {
        sent = send(group);
      } catch (error) {
        sent = Promise.reject(error);
      }
      sent.then(
        (outputs) => {
          for (let i = 0; i < theirs.length; i++) theirs[i]!.resolve(outputs[i]!);
        },
        (error: unknown) => {
          for (const caller of theirs) caller.reject(error);
        },
      );
    }
  };
  return (input) =>
    new Promise<O>((resolve, reject) => {
      if (inputs.push(input) === 1) afterTurn(flush);
      callers.push({ resolve, reject });
    });
}

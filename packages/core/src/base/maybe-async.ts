/** A value now, or a promise of it: the memory store and synchronous handlers answer without a promise. */
export type Awaitable<T> = T | Promise<T>;

export const isPromise = <T>(value: Awaitable<T>): value is Promise<T> =>
  value instanceof Promise || (typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function');

/**
 * `value.then(next, failed)`, but synchronous when `value` is not a promise, so a delivery that
 * never waits (memory store, synchronous handlers) runs start to end without a microtask.
 */
export function andThen<T, U>(
  value: Awaitable<T>,
  next: (value: T) => Awaitable<U>,
  failed?: (error: unknown) => Awaitable<U>,
): Awaitable<U> {
  if (isPromise(value)) return value.then(next, failed);
  return next(value);
}

/** Call `fn`, turning a synchronous throw into `failed`'s answer, as a rejected promise would be. */
export function attempt<U>(fn: () => Awaitable<U>, failed: (error: unknown) => Awaitable<U>): Awaitable<U> {
  let value: Awaitable<U>;
  try {
    value = fn();
  } catch (error) {
    return failed(error);
  }
  return isPromise(value) ? value.then(undefined, failed) : value;
}

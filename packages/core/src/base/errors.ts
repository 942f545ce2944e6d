import { NON_RETRIABLE } from './shared-keys.js';

/**
 * Throw from a handler when running it again cannot help (the order no longer exists, the
 * amount is wrong): the delivery is marked done with an error, answered 200 so the service stops
 * retrying, and reported to `onError`.
 *
 * @example
 * receiver.on('payment.success', async (event) => {
 *   const order = await orders.find(event.merchantReference);
 *   if (!order) throw new NonRetriableError(`no order ${event.merchantReference}`);
 * });
 */
export class NonRetriableError extends Error {
  /** Always `NonRetriableError`. */
  override name = 'NonRetriableError';
}
// A registered brand, so that a receiver from another copy of core (ESM and CJS, or two versions) recognises it.
Object.defineProperty(NonRetriableError.prototype, NON_RETRIABLE, { value: true });

/**
 * True for a `NonRetriableError` from any copy of `@payhook/core`: `instanceof` only knows its own.
 *
 * @example
 * if (isNonRetriableError(error)) console.info('not retried:', error.message);
 */
export function isNonRetriableError(error: unknown): error is NonRetriableError {
  return typeof error === 'object' && error !== null && (error as { [NON_RETRIABLE]?: unknown })[NON_RETRIABLE] === true;
}

/** An error's message for a log line or a record, whatever was thrown. */
export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

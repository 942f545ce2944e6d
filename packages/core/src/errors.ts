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
  override name = 'NonRetriableError';
}

/**
 * `@payhook/core/adapter`: what a framework adapter needs of a receiver, and nothing a merchant
 * writes against. An adapter reads bytes (or finds out why there are none) and writes the answer;
 * every status is decided by the pipeline.
 *
 * @example
 * import { adapterOf } from '@payhook/core/adapter';
 * const { process, maxBodyBytes, signatureHeader } = adapterOf(receiver);
 * const result = await process({ method: 'POST', signature: headers[signatureHeader], body });
 */
import { ADAPTER, type Receiver, type ReceiverAdapter } from './receiver.js';

export type { ReceiverAdapter } from './receiver.js';
export type { RawDelivery } from './pipeline/intake.js';
export type { ReceiverResult } from './pipeline/outcome.js';
export { readBodyLimited, type BodyDeadline } from './read-body.js';
export { bodyUnavailable } from './body-unavailable.js';

/** The adapter's view of a receiver made by `createReceiver`. */
export function adapterOf(receiver: Receiver): ReceiverAdapter {
  const adapter = (receiver as { [ADAPTER]?: ReceiverAdapter })[ADAPTER];
  if (!adapter) {
    throw new TypeError('[@payhook/core] this is not a receiver made by createReceiver(); pass the object createReceiver returned.');
  }
  return adapter;
}

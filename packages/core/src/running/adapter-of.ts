import type { Receiver, ReceiverAdapter } from '../contracts/receiving.js';
import { ADAPTER } from '../base/shared-keys.js';

/** The adapter's view of a receiver made by `createReceiver`. */
export function adapterOf(receiver: Receiver): ReceiverAdapter {
  const adapter = (receiver as { [ADAPTER]?: ReceiverAdapter })[ADAPTER];
  if (!adapter) {
    throw new TypeError('[@payhook/core] this is not a receiver made by createReceiver(); pass the object createReceiver returned.');
  }
  return adapter;
}

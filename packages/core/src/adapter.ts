/**
 * `@payhook/core/adapter`: what a framework adapter needs of a receiver, and nothing a merchant
 * writes against. An adapter reads bytes (or finds out why there are none) and writes the answer;
 * every status is decided by the pipeline. This file is the door under the workers', edge and
 * browser conditions, where `nodeBridge` is null; `node`, `bun` and `deno` get ./adapter-node.ts.
 *
 * @example
 * import { adapterOf } from '@payhook/core/adapter';
 * const { process, maxBodyBytes, signatureHeader } = adapterOf(receiver);
 * const result = await process({ method: 'POST', signature: headers[signatureHeader], body });
 *
 * @module
 */
import type { NodeBridge } from './node-bridge/node-bridge.js';

export { adapterOf } from './running/adapter-of.js';
export type { ReceiverAdapter } from './contracts/receiving.js';
export type { RawDelivery, ReceiverResult } from './contracts/delivery.js';
export { readBodyLimited, type BodyDeadline } from './reading/read-body.js';
export { bodyUnavailable } from './reading/body-unavailable.js';
/** Whether a value is a merchant account's name as a receiver with `accounts` reads one (tools that scope by account check theirs with it). */
export { isAccountName } from './accounts/account-name.js';
export type { NodeBridge };

/** No Node bridge here, so that it and the Node modules it needs never reach a worker's bundle. */
export const nodeBridge: NodeBridge | null = null;

/**
 * The Node bridge for an adapter that only runs on Node (Express, Fastify). Here, under a worker,
 * edge or browser condition, there is none: it throws, saying so.
 */
export function nodeBridgeFor(framework: string): NodeBridge {
  throw new Error(
    `[@payhook/core] ${framework} serves Node requests, but this copy of @payhook/core was resolved for a worker, edge or browser build (its export conditions): run ${framework} on Node, Bun or Deno.`,
  );
}

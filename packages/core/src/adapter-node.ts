import type { NodeBridge } from './node-bridge/node-bridge.js';
import { lingerOnClose, processNodeRequest, writeNodeResponse } from './node-bridge/node-bridge.js';

/**
 * `@payhook/core/adapter` under the `node`, `bun` and `deno` conditions: the same door as
 * ./adapter.ts, with the Node bridge, for adapters that serve Node (Express, Fastify) or both Node
 * and web platforms (Hono, Next).
 */
export * from './adapter.js';
export const nodeBridge: NodeBridge | null = { processNodeRequest, writeNodeResponse, lingerOnClose };

/** The Node bridge for an adapter that only runs on Node (Express, Fastify). */
export const nodeBridgeFor = (_framework: string): NodeBridge => nodeBridge!;

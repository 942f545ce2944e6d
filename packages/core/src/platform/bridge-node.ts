import { lingerOnClose, processNodeRequest, writeNodeResponse } from '../node.js';
import type { NodeBridge } from './bridge.js';

/** `@payhook/core/bridge` under the `node`, `bun` and `deno` conditions: the Node bridge. */
export const nodeBridge: NodeBridge | null = { processNodeRequest, writeNodeResponse, lingerOnClose };
export type { NodeBridge };

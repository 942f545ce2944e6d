import type { NodeBridge } from './bridge.js';

/**
 * `@payhook/core/bridge` everywhere else (workers, edge functions): nothing, so that the Node
 * bridge and the Node modules it needs never reach such a bundle.
 */
export const nodeBridge: NodeBridge | null = null;
export type { NodeBridge };

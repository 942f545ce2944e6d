/**
 * `@payhook/core/node`: a receiver on Node's own `http` server (`toNodeListener`), or inside a
 * handler that has a Node request and response (Next's Pages Router).
 *
 * @module
 */
export {
  lingerOnClose,
  processNodeRequest,
  toNodeListener,
  writeNodeResponse,
  type NodeDeliveryOptions,
} from './node-bridge/node-bridge.js';

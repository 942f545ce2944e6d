import type { lingerOnClose, processNodeRequest, writeNodeResponse } from '../node.js';

/** The Node bridge, for adapters that serve both Node and web platforms (Hono, Next). */
export interface NodeBridge {
  processNodeRequest: typeof processNodeRequest;
  writeNodeResponse: typeof writeNodeResponse;
  lingerOnClose: typeof lingerOnClose;
}

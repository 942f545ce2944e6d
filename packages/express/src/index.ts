/**
 * `@payhook/express`: the Express 4 and 5 adapter for `@payhook/core`.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RawBody, Receiver } from '@payhook/core';
import { adapterOf, nodeBridgeFor } from '@payhook/core/adapter';

/**
 * A request as Express hands it over. `rawBody` is the convention for bytes that a body parser
 * kept: `express.json({ verify: (req, _res, buf) => { req.rawBody = buf } })`; a Buffer in
 * `req.body` (`express.raw()`) is used as it is.
 */
export type PayhookExpressRequest = IncomingMessage & {
  /** The body's bytes as a body parser's `verify` kept them. */
  rawBody?: RawBody;
};

/** An Express (4 or 5) request handler; typed on Node's objects so no `@types/express` is needed. */
export type PayhookExpressHandler = (req: PayhookExpressRequest, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * The webhook route for Express 4 and 5. Mount it before `express.json()` (it reads the raw
 * stream itself), after `express.raw()`, or after a parser that kept the bytes in `req.rawBody`;
 * a body that was parsed without them is answered 500 and logged with the fix, never verified
 * re-serialised. A parser that skipped the request (another Content-Type) changes nothing.
 *
 * @example
 * const app = express();
 * app.all('/webhooks', payhookExpress(receiver)); // other methods get 405
 * app.use(express.json()); // the rest of the app
 *
 * @example
 * // A JSON parser already mounted app-wide: keep the raw bytes for payhook.
 * app.use(express.json({ verify: (req, _res, buf) => { (req as PayhookExpressRequest).rawBody = buf; } }));
 * app.all('/webhooks', payhookExpress(receiver));
 */
export function payhookExpress(receiver: Receiver): PayhookExpressHandler {
  // Checked now, so a wrong argument fails at startup rather than at each request.
  adapterOf(receiver);
  const { processNodeRequest, writeNodeResponse } = nodeBridgeFor('Express');
  // Neither step rejects: whatever goes wrong is the pipeline's bare 500, logged through the
  // receiver, never Express's error page (which shows the stack outside production).
  return (req, res) => {
    void processNodeRequest(receiver, req, { framework: 'express' }).then((result) => writeNodeResponse(res, result));
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import getRawBody from 'raw-body';
import { bodyUnavailable } from './body-unavailable.js';
import { SIGNATURE_HEADER, type Receiver, type ReceiverResult } from './receiver.js';
import type { RawBody } from './signature.js';

export interface NodeDeliveryOptions {
  /**
   * The raw body, when something upstream already read the stream and kept the bytes
   * (an `express.json({ verify })` hook, Fastify's buffer parser). Never a parsed object.
   */
  body?: RawBody;
  /** The name of the framework, for the error that says how to mount payhook. */
  framework?: string;
}

/**
 * The one Node bridge: read a Node request's raw body with the receiver's limit, run the pipeline,
 * and return the answer for the caller to write. Express, Fastify and the Next Pages Router all
 * go through it.
 *
 * @example
 * const result = await processNodeRequest(receiver, req);
 * writeNodeResponse(res, result);
 */
export async function processNodeRequest(
  receiver: Receiver,
  req: IncomingMessage,
  options: NodeDeliveryOptions = {},
): Promise<ReceiverResult> {
  const method = req.method ?? 'GET';
  if (method.toUpperCase() !== 'POST') return receiver.process({ method, signature: undefined, body: '' });
  let body = options.body;
  if (body === undefined) {
    // A body parser ran first: the bytes are gone. Fail now, never wait for a stream that will not come.
    const parsed = (req as { body?: unknown }).body;
    if (parsed !== undefined || req.readableEnded || !req.readable) {
      return receiver.reject('body-unavailable', new Error(bodyUnavailable(options.framework, parsed)));
    }
    try {
      body = await getRawBody(req, { length: req.headers['content-length'], limit: receiver.maxBodyBytes });
    } catch (error) {
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') return receiver.reject('too-large');
      if (type === 'stream.not.readable') {
        return receiver.reject('body-unavailable', new Error(bodyUnavailable(options.framework, undefined)));
      }
      // Aborted uploads and a Content-Length that does not match the bytes sent.
      return receiver.reject('malformed', error);
    }
  }
  return receiver.process({ method, signature: req.headers[SIGNATURE_HEADER], body });
}

/** Write a pipeline answer to a Node response. */
export function writeNodeResponse(res: ServerResponse, result: ReceiverResult): void {
  res.writeHead(result.status, result.headers);
  res.end(result.body);
}

/**
 * A `(req, res)` listener for `node:http`, or any framework that hands over Node's objects.
 *
 * @example
 * http.createServer(toNodeListener(receiver)).listen(3000);
 */
export function toNodeListener(receiver: Receiver, options: NodeDeliveryOptions = {}) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    writeNodeResponse(res, await processNodeRequest(receiver, req, options));
  };
}

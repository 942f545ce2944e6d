import type { IncomingMessage, ServerResponse } from 'node:http';
import getRawBody from 'raw-body';
import { adapterOf, type RawDelivery } from './adapter.js';
import type { ReceiverResult } from './pipeline/outcome.js';
import type { Receiver } from './receiver.js';
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
 * go through it. It only reads; the pipeline decides every answer.
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
  const { process, maxBodyBytes, signatureHeader } = adapterOf(receiver);
  const delivery: RawDelivery = { method: req.method ?? 'GET', signature: req.headers[signatureHeader], framework: options.framework };
  if (delivery.method.toUpperCase() !== 'POST' || options.body !== undefined) return process({ ...delivery, body: options.body });
  return process({ ...delivery, ...(await readNodeBody(req, maxBodyBytes)) });
}

/** The body's bytes, or why there are none. Never waits for a stream that already ended. */
async function readNodeBody(req: IncomingMessage, limit: number): Promise<Pick<RawDelivery, 'body' | 'problem' | 'parsed' | 'error'>> {
  // A body parser ran first: the bytes are gone.
  const parsed = (req as { body?: unknown }).body;
  if (parsed !== undefined || req.readableEnded || !req.readable) return { problem: 'unavailable', parsed };
  try {
    return { body: await getRawBody(req, { length: req.headers['content-length'], limit }) };
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') return { problem: 'too-large' };
    if (type === 'stream.not.readable') return { problem: 'unavailable' };
    // Aborted uploads and a Content-Length that does not match the bytes sent.
    return { problem: 'unreadable', error };
  }
}

/** Write a pipeline answer to a Node response. */
export function writeNodeResponse(res: ServerResponse, result: ReceiverResult): void {
  res.writeHead(result.status, result.headers as Record<string, string>);
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

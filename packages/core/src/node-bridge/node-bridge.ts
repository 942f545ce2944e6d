import type { IncomingMessage, ServerResponse } from 'node:http';
import { adapterOf } from '../running/adapter-of.js';
import type { BodyDeadline } from '../reading/read-body.js';
import type { RawDelivery } from '../contracts/delivery.js';
import { signatureHeaderSeen } from '../settings/options.js';
import type { ReceiverResult } from '../contracts/delivery.js';
import type { Receiver } from '../contracts/receiving.js';
import type { RawBody } from '../protocol/signature.js';

/** What `processNodeRequest` and `toNodeListener` take beside the request. */
export interface NodeDeliveryOptions {
  /**
   * The raw body, when something upstream already read the stream and kept the bytes (Fastify's
   * buffer parser). Never a parsed object. Without it, bytes a parser kept on the request are
   * used: `req.rawBody` (an `express.json({ verify })` hook) or a Buffer in `req.body` (`express.raw()`).
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
  const { process, fail, maxBodyBytes, bodyDeadline, signatureHeader, accountOf } = adapterOf(receiver);
  try {
    const signature = req.headers[signatureHeader];
    const delivery: RawDelivery = { method: req.method ?? 'GET', signature, framework: options.framework };
    // Express keeps the whole path in originalUrl: a router mounted at /webhooks/:account sees only '/' in url.
    if (accountOf) delivery.account = accountOf((req as { originalUrl?: string }).originalUrl ?? req.url, (name) => req.headers[name]);
    if (signature === undefined) delivery.signatureHeaderSeen = signatureHeaderSeen(signatureHeader, (name) => name in req.headers);
    const kept = options.body ?? keptBytes(req);
    if (delivery.method.toUpperCase() !== 'POST' || kept !== undefined) return await process({ ...delivery, body: kept });
    return await process({ ...delivery, ...(await readNodeBody(req, maxBodyBytes, bodyDeadline)) });
  } catch (error) {
    // The pipeline never rejects; a request object no framework should hand over still gets a bare 500.
    return fail(error);
  }
}

/** What body parsers leave on a request: body-parser marks the requests it read with `_body`. */
type ParsedRequest = IncomingMessage & { body?: unknown; rawBody?: unknown; _body?: boolean };

/** The exact bytes a parser kept: `req.rawBody` from a verify hook, or `req.body` from a raw parser. */
function keptBytes(req: ParsedRequest): RawBody | undefined {
  const { rawBody, body } = req;
  if (rawBody instanceof Uint8Array || typeof rawBody === 'string') return rawBody;
  return body instanceof Uint8Array ? body : undefined;
}

type NodeBody = Pick<RawDelivery, 'body' | 'problem' | 'parsed' | 'error'>;

const EMPTY = new Uint8Array(0);

/** The body's bytes, or why there are none. Never waits for a stream that already ended, nor past the deadline. */
async function readNodeBody(req: ParsedRequest, limit: number, deadline: BodyDeadline): Promise<NodeBody> {
  // A request that declares no body (no Transfer-Encoding, Content-Length absent or 0) has the empty
  // body, whatever a framework did with its ended stream: Fastify, say, runs no parser for it.
  if (req.headers['transfer-encoding'] === undefined && (req.headers['content-length'] ?? '0') === '0') return { body: EMPTY };
  // A parser that skipped the request (another Content-Type) may still set `req.body = {}` (body-parser 1.x):
  // what counts is whether the stream was read.
  const read = req._body === true || req.readableDidRead || req.readableEnded || !req.readable;
  if (read) return { problem: 'unavailable', parsed: req.body };
  return new Promise<NodeBody>((resolve) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    const chunks: Uint8Array[] = [];
    let total = 0;
    const finish = (result: NodeBody, stop = false) => {
      deadline.clock.clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      // Stop taking bytes; the answer closes the connection (lingerOnClose drains what is left).
      if (stop) req.unpipe().pause();
      resolve(result);
    };
    const onData = (chunk: Uint8Array) => {
      total += chunk.byteLength;
      if (total > limit) return finish({ problem: 'too-large' }, true);
      chunks.push(chunk);
    };
    // Node's parser ends the stream only once every byte Content-Length (or chunking) promised came.
    const onEnd = () => finish({ body: Buffer.concat(chunks, total) });
    const onError = (error: Error) => finish({ problem: 'unreadable', error });
    const onClose = () => finish({ problem: 'unreadable', error: new Error('request aborted before its body ended') });
    const timer = deadline.clock.setTimeout(() => finish({ problem: 'too-slow' }, true), deadline.ms);
    if (declared > limit) return finish({ problem: 'too-large' }, true);
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** How long a connection answered with `Connection: close` keeps taking (and dropping) the rest of its body. */
const LINGER_MS = 2_000;

/**
 * Let an answer sent before its request's body was read reach the client: Node closes such a
 * connection as soon as the answer is written, and a socket closed with unread bytes is reset,
 * so a client still uploading gets ECONNRESET instead of the 413 or 408. Here the rest of the
 * body is read and dropped until it ends, or for at most LINGER_MS, before the connection closes.
 *
 * @example
 * lingerOnClose(res); // before writing a 413 with `Connection: close`
 */
export function lingerOnClose(res: ServerResponse): void {
  const { req, socket } = res;
  if (!req || !socket || req.complete || typeof socket.destroySoon !== 'function') return;
  const destroySoon = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    const close = () => {
      clearTimeout(timer);
      destroySoon();
    };
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    req.once('end', close);
    req.unpipe();
    req.resume();
  };
}

/**
 * Write a pipeline answer to a Node response; one that closes the connection lets the client read
 * it first. Never throws: a response that can no longer be written (its client went away, or
 * something else already answered) is closed instead.
 */
export function writeNodeResponse(res: ServerResponse, result: ReceiverResult): void {
  try {
    if (result.headers.connection === 'close') lingerOnClose(res);
    res.writeHead(result.status, result.headers as Record<string, string>);
    res.end(result.body);
  } catch {
    res.destroy();
  }
}

/**
 * A `(req, res)` listener for `node:http`, or any framework that hands over Node's objects.
 *
 * @example
 * http.createServer(toNodeListener(receiver)).listen(3000);
 */
export function toNodeListener(receiver: Receiver, options: NodeDeliveryOptions = {}) {
  // Checked now, so a wrong argument fails at startup rather than at each request.
  adapterOf(receiver);
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    writeNodeResponse(res, await processNodeRequest(receiver, req, options));
  };
}

/** The Node bridge, as `@payhook/core/adapter` hands it to adapters under the Node conditions. */
export interface NodeBridge {
  /** Reads a Node request's body and runs the pipeline on it: the answer to write. */
  processNodeRequest: typeof processNodeRequest;
  /** Writes a pipeline answer to a Node response. */
  writeNodeResponse: typeof writeNodeResponse;
  /** Lets an answer sent before the body was read reach a client still uploading. */
  lingerOnClose: typeof lingerOnClose;
}

/**
 * `@payhook/board/node`: the board on Node's own requests: Express and `node:http` (`nodeBoard`),
 * Fastify (`fastifyBoard`).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Board } from './board.js';
import { noteReachedAt } from './base/guard.js';

/** What Express and body parsers leave on a Node request. */
type NodeRequest = IncomingMessage & { originalUrl?: string; body?: unknown; _body?: boolean };
type Body = Uint8Array<ArrayBuffer> | string | ReadableStream<Uint8Array>;

/**
 * The board for Node's own requests: Express (`app.use(board.basePath, nodeBoard(board))`) and
 * `node:http`. It makes a web-standard Request of the Node one (the full path, so it may be mounted
 * under a prefix), hands it to the board, and writes the answer back as it comes. A form an
 * urlencoded parser already read (Express 4 or 5) is sent on as it parsed it.
 *
 * @example
 * app.use(board.basePath, nodeBoard(board)); // Express 4 or 5, before or after express.urlencoded()
 */
export function nodeBoard(board: Board): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return (req, res) => respond(board, req, res);
}

/** The parts of a Fastify 4 or 5 instance the mount uses, so that the board needs no fastify of its own. */
export interface FastifyBoardInstance {
  /** Removes the content-type parsers, in the board's own context only. */
  removeAllContentTypeParsers(): void;
  /** Adds a content-type parser: the board's hands every request's stream on unread. */
  addContentTypeParser(
    type: string,
    parser: (request: unknown, payload: IncomingMessage, done: (error: null, body?: unknown) => void) => void,
  ): void;
  /** Routes every method at the path to the handler. */
  all(path: string, handler: (request: FastifyBoardRequest, reply: FastifyBoardReply) => Promise<void>): unknown;
}
interface FastifyBoardRequest {
  raw: IncomingMessage;
  body?: unknown;
}
interface FastifyBoardReply {
  raw: ServerResponse;
  hijack(): unknown;
}

/**
 * The board for Fastify 4 and 5, as an encapsulated plugin. In its own context Fastify reads no
 * body: its one content-type parser hands the request's stream on unread, so that `authorize` is
 * asked before anything is read (a stranger's post, however big or slow, gets 401 at once) and the
 * board reads a form itself, bounded and within the receiver's `bodyTimeoutMs`, as nodeBoard does.
 * The rest of the app parses as before. Register it without a `prefix` and do not wrap it in
 * fastify-plugin: its routes are `basePath` as the browser sees it.
 *
 * @example
 * await app.register(fastifyBoard(board));
 */
export function fastifyBoard(board: Board): (instance: FastifyBoardInstance) => Promise<void> {
  return async (instance) => {
    // This context only: no JSON parsing, no 415, no body read before the board asks who it is.
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    const handler = async (request: FastifyBoardRequest, reply: FastifyBoardReply) => {
      // The board writes the answer to the Node response itself.
      reply.hijack();
      // The payload as Fastify's preParsing hooks left it (the request itself, when there are none), unread.
      const body = request.body instanceof Readable ? (Readable.toWeb(request.body) as ReadableStream<Uint8Array>) : undefined;
      await respond(board, request.raw, reply.raw, body);
    };
    if (board.basePath !== '') instance.all(board.basePath, handler);
    instance.all(`${board.basePath}/*`, handler);
  };
}

/** Express's, Fastify's and node:http's one path: the board's answer to a Node request, written to its response. */
async function respond(board: Board, req: NodeRequest, res: ServerResponse, body?: Body): Promise<void> {
  try {
    const response = await board.fetch(noteReachedAt(toRequest(req, body), req.socket?.localAddress));
    res.statusCode = response.status;
    for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
    const cookies = response.headers.getSetCookie();
    if (cookies.length > 0) res.setHeader('set-cookie', cookies);
    if (response.body === null || req.method === 'HEAD') {
      await response.body?.cancel();
      res.end();
      return;
    }
    const reader = response.body.getReader();
    // A browser that leaves (a closed tab) ends what is still being sent.
    res.on('close', () => void reader.cancel().catch(() => {}));
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
    res.end();
  } catch {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
    res.end();
  }
}

function toRequest(req: NodeRequest, body: Body | undefined): Request {
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true;
  const url = new URL(req.originalUrl ?? req.url ?? '/', `${secure ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    // The body below is whole bytes, maybe a parser's re-encoding: its length is its own.
    if (name === 'content-length' || name === 'transfer-encoding') continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return new Request(url, { method, headers });
  // The request's own stream, unread: the board reads it (bounded, within the body deadline) only once authorize has let it in.
  const own = body ?? parsedBody(req) ?? (Readable.toWeb(req) as ReadableStream<Uint8Array>);
  return new Request(url, { method, headers, body: own, duplex: 'half' } as RequestInit);
}

/**
 * What a body parser that ran before the board read, or undefined when the stream is still unread:
 * body-parser 1 (Express 4) marks it `_body`, body-parser 2 (Express 5) only ends the stream.
 */
function parsedBody(req: NodeRequest): Body | undefined {
  if (req._body !== true && !req.readableEnded) return undefined;
  const parsed = req.body;
  if (parsed instanceof Uint8Array) return new Uint8Array(parsed);
  if (typeof parsed === 'string') return parsed;
  if (parsed === null || typeof parsed !== 'object') return '';
  // express.urlencoded's object (qs or querystring), a form again: the board's fields are strings.
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(parsed))
    for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'string') form.append(name, v);
  return form.toString();
}

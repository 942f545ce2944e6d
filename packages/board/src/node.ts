import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Board } from './board.js';
import { MAX_FORM_BYTES } from './guard.js';

/** What Express and body parsers leave on a Node request. */
type NodeRequest = IncomingMessage & { originalUrl?: string; body?: unknown; _body?: boolean };

/**
 * The board for Node's own requests: Express (`app.use(board.basePath, nodeBoard(board))`),
 * Fastify (`reply.hijack()`, then the raw request and reply) and `node:http`. It makes a
 * web-standard Request of the Node one (the full path, so it may be mounted under a prefix),
 * hands it to the board, and writes the answer back as it comes.
 *
 * @example
 * app.use(board.basePath, nodeBoard(board)); // Express 4 or 5
 */
export function nodeBoard(board: Board): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req: NodeRequest, res) => {
    try {
      const response = await board.fetch(await toRequest(req));
      res.statusCode = response.status;
      for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) res.setHeader('set-cookie', cookies);
      if (response.body === null || req.method === 'HEAD') {
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
  };
}

async function toRequest(req: NodeRequest): Promise<Request> {
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true;
  const url = new URL(req.originalUrl ?? req.url ?? '/', `${secure ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return new Request(url, { method, headers });
  return new Request(url, { method, headers, body: await bodyOf(req) });
}

/** A post's body: what a body parser (express.urlencoded) already read, or the stream, up to one byte past the board's limit. */
async function bodyOf(req: NodeRequest): Promise<Uint8Array<ArrayBuffer> | string> {
  if (req._body === true && req.body !== null && typeof req.body === 'object' && !(req.body instanceof Uint8Array)) {
    return new URLSearchParams(req.body as Record<string, string>).toString();
  }
  if (req.body instanceof Uint8Array) return new Uint8Array(req.body);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    chunks.push(chunk);
    // The board refuses it past the limit: no need to hold more.
    if (size > MAX_FORM_BYTES) break;
  }
  return new Uint8Array(Buffer.concat(chunks));
}

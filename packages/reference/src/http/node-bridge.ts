import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/**
 * A Node request as a web `Request`, streaming its body. `origin` is used when the Host header is
 * missing.
 *
 * @example
 * const request = toWebRequest(req, 'http://127.0.0.1:4010');
 */
export function toWebRequest(req: IncomingMessage, origin: string): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const host = req.headers.host;
  const url = new URL(req.url ?? '/', host ? `http://${host}` : origin);
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(url, {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    // Required by Node's fetch for a streamed request body.
    duplex: 'half',
  } as RequestInit);
}

/**
 * Write a web `Response` to a Node response, streaming its body.
 *
 * @example
 * await writeWebResponse(res, await service.fetch(toWebRequest(req, origin)));
 */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body) {
    const reader = response.body.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) res.write(r.value);
  }
  res.end();
}

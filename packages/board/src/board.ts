import { adapterOf } from '@payhook/core/adapter';
import type { LiveCounter } from './live.js';
import { misdirected, newToken, tokenCookie, tokenOf } from './base/guard.js';
import { boardSettings, type BoardOptions, type BoardSettings, type BoardViewer } from './base/options.js';
import { bare, type View } from './views/page.js';
import { accountLedger } from '@payhook/core/store';
import { notAllowed, notFound, ROUTES } from './routes.js';
import { viewerOf } from './base/scope.js';

/** The board, as `createBoard` makes it: a web-standard handler and the path it is mounted at. */
export interface Board {
  /** The web-standard handler: every request under `basePath`. Hono, Next's App Router, Bun, Deno and workers call it as it is. */
  fetch(request: Request): Promise<Response>;
  /** The mount path, as `createBoard` was given it (no trailing slash): `nodeBoard` and `fastifyBoard` mount under it. */
  readonly basePath: string;
}

/**
 * The board over a receiver's ledger, for a mount in the merchant's own app: the deliveries with
 * filters, one delivery with its body and its reference's attempts, and replay, retry and erase,
 * each confirmed, checked against a token the page carries, and written to the receiver's logger
 * with who did it.
 *
 * @example
 * const board = createBoard({ receiver, basePath: '/admin/payments', authorize: (req) => adminOf(req) });
 * app.all('/admin/payments/*', (c) => board.fetch(c.req.raw)); // Hono
 */
export function createBoard(options: BoardOptions): Board {
  const settings = boardSettings(options);
  const live: LiveCounter = { open: 0 };
  // The names refused so far, each logged once: a hostile page asking again and again fills no log.
  const misnamed = new Set<string>();
  return {
    basePath: settings.basePath,
    fetch: (request) =>
      serve(settings, request, live, misnamed).catch((error: unknown) => {
        adapterOf(settings.receiver).log('error', { err: error }, `[@payhook/board] a board request failed: ${String(error)}`);
        return bare(500, 'The board failed; the receiver’s log says why.');
      }),
  };
}

async function serve(settings: BoardSettings, request: Request, live: LiveCounter, misnamed: Set<string>): Promise<Response> {
  const url = new URL(request.url);
  const { basePath } = settings;
  // Where it was sent, before who sent it: a hostile page's name pointed at this machine reads and does nothing.
  const wrongHost = misdirected(request, url, settings.hosts);
  if (wrongHost !== undefined) {
    const host = (request.headers.get('host') || url.host).slice(0, 100);
    if (!misnamed.has(host) && misnamed.size < 100) {
      misnamed.add(host);
      adapterOf(settings.receiver).log(
        'warn',
        { board: { host, refused: wrongHost } },
        `[@payhook/board] refused a request for host ${JSON.stringify(host)}: ${wrongHost}. If the board is served under that name, add it to createBoard's \`hosts\`.`,
      );
    }
    return bare(421, 'This board is not served under this name.');
  }
  if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) return bare(404, 'Not found.');
  const path = url.pathname.slice(basePath.length) || '/';
  // Who it is, before anything is read or shown.
  const answer = await settings.authorize(request);
  if (answer instanceof Response) return answer;
  if (!answer || typeof answer.user !== 'string') return bare(401, 'Sign in to see the board.');
  // A malformed account throws: createBoard's fetch logs it and answers 500 (scope.ts says why).
  const viewer: BoardViewer = viewerOf(answer, settings.accounts);
  const cookieToken = tokenOf(request);
  const token = cookieToken ?? newToken();
  const view: View = {
    settings,
    url,
    viewer,
    token,
    canAct: !settings.readOnly && viewer.readOnly !== true,
    ledger: accountLedger(settings.receiver.store.ledger!, viewer.account, '[@payhook/board]'),
    platform: settings.accounts && viewer.account === undefined,
  };
  let response = await route(view, request, path, live);
  // A HEAD gets a GET's status and headers, and nothing of its body: a live stream ends before it keeps a place or looks.
  if (request.method.toUpperCase() === 'HEAD' && response.body !== null) {
    await response.body.cancel();
    response = new Response(null, { status: response.status, headers: response.headers });
  }
  // The first page a browser gets sets the token its forms send back.
  if (cookieToken === undefined && response.headers.get('content-type')?.startsWith('text/html'))
    response.headers.append('set-cookie', tokenCookie(token, basePath, url.protocol === 'https:'));
  return response;
}

/** The first route whose method and path match answers (routes.ts); a GET of no page is 404, anything else 405. */
async function route(view: View, request: Request, path: string, live: LiveCounter): Promise<Response> {
  const method = request.method.toUpperCase() === 'HEAD' ? 'GET' : request.method.toUpperCase();
  for (const r of ROUTES) {
    const match = r.method === method ? r.path.exec(path) : null;
    if (match !== null) return r.serve(view, request, match, live);
  }
  return method === 'GET' ? notFound(view) : notAllowed();
}

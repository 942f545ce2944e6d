import type { LedgerEntry } from '@payhook/core';
import { adapterOf } from '@payhook/core/adapter';
import { SCRIPT, STYLE } from './assets.js';
import { liveStream, type LiveCounter } from './live.js';
import { chartImage } from './views/chart.js';
import { merchantReferenceOf } from './views/merchant.js';
import { act, confirmView, isAction } from './actions.js';
import { newToken, readForm, refusal, SECURITY_HEADERS, tokenCookie, tokenOf } from './guard.js';
import { boardSettings, type BoardOptions, type BoardSettings, type BoardViewer } from './options.js';
import { bare, problem, who, type View } from './page.js';
import { accountLedger } from '@payhook/core/store';
import { viewerOf } from './scope.js';
import { deliveryView } from './views/delivery.js';
import { filtersOf, listView } from './views/list.js';

export interface Board {
  /** The web-standard handler: every request under `basePath`. Hono, Next's App Router, Bun, Deno and workers call it as it is. */
  fetch(request: Request): Promise<Response>;
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
  return {
    basePath: settings.basePath,
    fetch: (request) =>
      serve(settings, request, live).catch((error: unknown) => {
        adapterOf(settings.receiver).log('error', { err: error }, `[@payhook/board] a board request failed: ${String(error)}`);
        return bare(500, 'The board failed; the receiver’s log says why.');
      }),
  };
}

async function serve(settings: BoardSettings, request: Request, live: LiveCounter): Promise<Response> {
  const url = new URL(request.url);
  const { basePath } = settings;
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
  const response = await route(view, request, path, live);
  // The first page a browser gets sets the token its forms send back.
  if (cookieToken === undefined && response.headers.get('content-type')?.startsWith('text/html'))
    response.headers.append('set-cookie', tokenCookie(token, basePath, url.protocol === 'https:'));
  return response;
}

const asset = (text: string, type: string) =>
  new Response(text, { headers: { ...SECURITY_HEADERS, 'content-type': `${type}; charset=utf-8` } });

async function route(view: View, request: Request, path: string, live: LiveCounter): Promise<Response> {
  const method = request.method.toUpperCase();
  if (method === 'GET' || method === 'HEAD') {
    if (path === '/') return listView(view);
    if (path === '/assets/board.css') return asset(STYLE, 'text/css');
    if (path === '/assets/board.js') return asset(SCRIPT, 'text/javascript');
    if (path === '/chart.svg') return chartImage(view.ledger, filtersOf(view).query, Date.now());
    if (path === '/live') {
      const { query, form } = filtersOf(view);
      const merchant = form.merchant === '' ? undefined : (e: LedgerEntry) => merchantReferenceOf(e) === form.merchant;
      return liveStream(view, query, request, live, merchant);
    }
    const id = /^\/deliveries\/([^/]+)$/.exec(path)?.[1];
    if (id !== undefined) return deliveryView(view, safeDecode(id));
    const action = view.url.searchParams.get('action') ?? '';
    if (path === '/confirm' && isAction(action)) return view.canAct ? confirmView(view, action) : readOnly(view);
    return problem(view, 404, 'Not found', 'The board has no such page.');
  }
  const action = /^\/actions\/([\w-]+)$/.exec(path)?.[1];
  if (method !== 'POST' || action === undefined || !isAction(action)) {
    return new Response('Not allowed.\n', { status: 405, headers: { ...SECURITY_HEADERS, allow: 'GET, HEAD, POST' } });
  }
  const form = await readForm(request, adapterOf(view.settings.receiver).bodyDeadline);
  if (form === 'too-slow') return bare(408, 'The form did not arrive in time.');
  if (form === 'too-large') return bare(413, 'An action is a small form; this was not one.');
  const why = refusal(request, view.url, form);
  if (why !== undefined) {
    adapterOf(view.settings.receiver).log(
      'warn',
      { board: { user: view.viewer.user, account: view.viewer.account, action, refused: why } },
      `[@payhook/board] ${who(view)}: refused ${why}`,
    );
    return bare(403, `Refused: ${why}.`);
  }
  if (!view.canAct) return readOnly(view);
  return act(view, action, form);
}

const readOnly = (view: View) => problem(view, 403, 'Read-only', 'This board is read-only for you: it shows deliveries, and acts on none.');

const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

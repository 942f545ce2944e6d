import type { LedgerEntry } from '@payhook/core';
import { adapterOf } from '@payhook/core/adapter';
import { ACTIONS, act, confirmView, isAction, type Action } from './actions.js';
import { writeAudit } from './base/options.js';
import { SCRIPT, STYLE } from './assets.js';
import { readForm, refusal, SECURITY_HEADERS } from './base/guard.js';
import { liveStream, type LiveCounter } from './live.js';
import { bare, problem, who, type View } from './views/page.js';
import { chartImage } from './views/chart.js';
import { deliveryView } from './views/delivery.js';
import { filtersOf, listView } from './views/list.js';
import { merchantReferenceOf } from './views/merchant.js';

/**
 * One thing the board serves. Every route is behind `authorize` (board.ts asks it before routing);
 * the tests ask each route's examples of a board whose authorize says no, so a route added here is
 * held to it the day it is added.
 */
export interface Route {
  /** What it serves, for a test's name. */
  kind: 'page' | 'asset' | 'image' | 'stream' | 'action';
  /** GET answers HEAD too. */
  method: 'GET' | 'POST';
  /** The path under the board's, matched whole; its groups are handed to `serve`. */
  path: RegExp;
  /** Paths it answers (with a query where it needs one), one for each thing it serves. */
  examples: readonly string[];
  serve(view: View, request: Request, match: RegExpExecArray, live: LiveCounter): Promise<Response> | Response;
}

const actionNames = Object.keys(ACTIONS);

/** The board's routes, in the order they are tried: the first whose method and path match answers. */
export const ROUTES: readonly Route[] = [
  { kind: 'page', method: 'GET', path: /^\/$/, examples: ['/'], serve: (view) => listView(view) },
  {
    kind: 'asset',
    method: 'GET',
    path: /^\/assets\/board\.css$/,
    examples: ['/assets/board.css'],
    serve: () => asset(STYLE, 'text/css'),
  },
  {
    kind: 'asset',
    method: 'GET',
    path: /^\/assets\/board\.js$/,
    examples: ['/assets/board.js'],
    serve: () => asset(SCRIPT, 'text/javascript'),
  },
  {
    kind: 'image',
    method: 'GET',
    path: /^\/chart\.svg$/,
    examples: ['/chart.svg'],
    serve: (view) => chartImage(view.ledger, filtersOf(view).query, Date.now()),
  },
  {
    kind: 'stream',
    method: 'GET',
    path: /^\/live$/,
    examples: ['/live'],
    serve: (view, request, _, live) => {
      const { query, form } = filtersOf(view);
      const merchant = form.merchant === '' ? undefined : (e: LedgerEntry) => merchantReferenceOf(e) === form.merchant;
      return liveStream(view, query, request, live, merchant);
    },
  },
  {
    kind: 'page',
    method: 'GET',
    path: /^\/deliveries\/([^/]+)$/,
    examples: ['/deliveries/0000000000a-example'],
    serve: (view, _, [, id]) => deliveryView(view, safeDecode(id!)),
  },
  {
    kind: 'page',
    method: 'GET',
    path: /^\/confirm$/,
    examples: actionNames.map((name) => `/confirm?action=${name}`),
    serve: (view) => {
      const action = view.url.searchParams.get('action') ?? '';
      if (!isAction(action)) return notFound(view);
      return view.canAct ? confirmView(view, action) : readOnly(view);
    },
  },
  {
    kind: 'action',
    method: 'POST',
    path: /^\/actions\/([\w-]+)$/,
    examples: actionNames.map((name) => `/actions/${name}`),
    serve: (view, request, [, action]) => (isAction(action!) ? post(view, request, action) : notAllowed()),
  },
];

/** A post to an action: read its form, then refused (and logged) unless it came from the board's own page with its token. */
async function post(view: View, request: Request, action: Action): Promise<Response> {
  const form = await readForm(request, adapterOf(view.settings.receiver).bodyDeadline);
  if (form === 'too-slow') return bare(408, 'The form did not arrive in time.');
  if (form === 'too-large') return bare(413, 'An action is a small form; this was not one.');
  const why = refusal(request, view.url, form);
  if (why !== undefined) {
    const { user, account } = view.viewer;
    // What the post named, as it named it: a forged form's words are data here.
    const target = { id: form.get('id') || undefined, reference: form.get('reference') || undefined };
    const record = { user, account, action, target, result: { kind: 'refused', why } as const, message: `${who(view)}: refused ${why}` };
    await writeAudit(view.settings.receiver, view.settings.audit, record, { refused: why });
    return bare(403, `Refused: ${why}.`);
  }
  if (!view.canAct) return readOnly(view);
  return act(view, action, form);
}

const asset = (text: string, type: string) =>
  new Response(text, { headers: { ...SECURITY_HEADERS, 'content-type': `${type}; charset=utf-8` } });

/** What no route answers: a GET or HEAD of no page. */
export const notFound = (view: View) => problem(view, 404, 'Not found', 'The board has no such page.');

/** What no route answers: any other method, or a post to no action. */
export const notAllowed = () => new Response('Not allowed.\n', { status: 405, headers: { ...SECURITY_HEADERS, allow: 'GET, HEAD, POST' } });

const readOnly = (view: View) => problem(view, 403, 'Read-only', 'This board is read-only for you: it shows deliveries, and acts on none.');

const safeDecode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

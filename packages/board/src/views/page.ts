import type { Ledger } from '@payhook/core/store';
import type { BoardSettings, BoardViewer } from '../base/options.js';
import { SECURITY_HEADERS } from '../base/guard.js';
import { html, type Html } from '@payhook/core/api';

/** What every view knows of the request it answers. */
export interface View {
  settings: BoardSettings;
  url: URL;
  viewer: BoardViewer;
  /** The token the page's forms send back (the cookie's). */
  token: string;
  /** Whether this viewer may act: neither the board nor the viewer is read-only. */
  canAct: boolean;
  /** The ledger as this viewer may see it: their account's records only, or every record (scope.ts). */
  ledger: Ledger;
  /** The platform view: a receiver with accounts, a viewer of every account; rows show whose they are. */
  platform: boolean;
}

/** Who did it, for an audit line: the user, and the account they are confined to. */
export const who = (view: View): string =>
  view.viewer.account === undefined ? view.viewer.user : `${view.viewer.user} (account ${view.viewer.account})`;

/** A link under the board's path, with the query's set values. */
export function link(view: Pick<View, 'settings'>, path: string, query: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  // The list is the board's path itself (`/admin/payments`, not `/admin/payments/`): Next redirects a trailing slash away.
  const at = path === '/' && view.settings.basePath !== '' ? view.settings.basePath : `${view.settings.basePath}${path}`;
  return `${at}${s ? `?${s}` : ''}`;
}

/** A whole page: the board's header and stylesheet, and its script only where asked (the live list). */
export function page(view: View, title: string, body: Html, status = 200, script = false): Response {
  const js = script ? html`<script src="${link(view, '/assets/board.js')}" defer></script>` : '';
  const doc = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · payhook</title><link rel="stylesheet" href="${link(view, '/assets/board.css')}">${js}</head><body><header><h1><a href="${link(view, '/')}">payhook deliveries</a></h1><nav aria-label="Board"><a href="${link(view, '/', { dead: 'open' })}">Open dead letters</a></nav><span class="who">${view.viewer.user}${view.viewer.account === undefined ? (view.platform ? ' · every account' : '') : html` · account <span id="account">${view.viewer.account}</span>`}${view.canAct ? '' : ' (read-only)'}</span></header><main id="main">${body}</main></body></html>`;
  return new Response(doc.value, { status, headers: { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' } });
}

/** A page that says what went wrong, in words for the person looking. */
export const problem = (view: View, status: number, title: string, message: string): Response =>
  page(
    view,
    title,
    html`<h2>${title}</h2><p class="notice error" role="alert">${message}</p><p><a href="${link(view, '/')}">Back to the deliveries</a></p>`,
    status,
  );

/**
 * The answer for an id this viewer cannot see: one that never was, was erased, or is another
 * account's. All three read the same, so that ids cannot be probed.
 */
export const noSuchDelivery = (view: View, id: string): Response =>
  problem(view, 404, 'No such delivery', `There is no delivery ${id} in the ledger; it may have been erased or outlived its retention.`);

/** A bare answer before anyone is known (401, 403, 404, 413): text, with the same headers. */
export const bare = (status: number, text: string): Response =>
  new Response(`${text}\n`, { status, headers: { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' } });

/** Epoch ms as the board shows time: UTC, to the second. */
export const at = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

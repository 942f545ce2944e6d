import { isLoopback } from '../merchants.js';
import { readText } from '../http.js';
import type { Route, RouteRequest } from '../router.js';
import { allowedActions, DASHBOARD_ACTIONS, detailPage, transactionPath, type DashboardAction } from './dashboard-detail.js';
import { overview } from './dashboard-list.js';
import { errorPage, html, seeOther } from './html.js';

const back = html`<a href="/_dashboard">Back to the dashboard</a>`;

function detail({ ctx, params }: RouteRequest): Response {
  const tx = ctx.transactions.find(params.reference!);
  if (!tx) return errorPage(404, 'Transaction not found', html`No transaction ${params.reference}. ${back}`);
  return detailPage(ctx, tx);
}

/**
 * Refuse a form post another site could have made (CSRF) or that came through a name rebound to
 * this machine (DNS rebinding): the page's host must be a loopback name or address, and a browser's
 * Origin (or Sec-Fetch-Site) must be this very origin. Clients that send neither (curl) pass.
 */
function foreignPost({ request, url }: RouteRequest): Response | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const origin = request.headers.get('origin');
  const site = request.headers.get('sec-fetch-site');
  const local = host === 'localhost' || host.endsWith('.localhost') || isLoopback(host);
  if (local && (origin === null || origin === url.origin) && (site === null || site === 'same-origin' || site === 'none')) return null;
  return errorPage(403, 'Refused', html`Dashboard actions are taken from the dashboard itself, opened at a loopback address (such as http://127.0.0.1). ${back}`);
}

async function act(req: RouteRequest): Promise<Response> {
  const refused = foreignPost(req);
  if (refused) return refused;
  await readText(req.request, 4096);
  const { ctx, params } = req;
  const tx = ctx.transactions.find(params.reference!);
  if (!tx) return errorPage(404, 'Transaction not found', html`No transaction ${params.reference}. ${back}`);
  const action = params.action as DashboardAction;
  if (!(DASHBOARD_ACTIONS as readonly string[]).includes(action) || !allowedActions(tx).includes(action)) {
    return errorPage(400, 'Action refused', html`${action} is not allowed for ${tx.reference} (${tx.mode}, ${tx.status}). <a href="${transactionPath(tx.reference)}">Back to the transaction</a>`);
  }
  const moved = ctx.move(tx, action, { note: 'from the dashboard' });
  if (!moved.ok) return errorPage(400, 'Action refused', html`${moved.message} <a href="${transactionPath(tx.reference)}">Back to the transaction</a>`);
  return seeOther(transactionPath(tx.reference));
}

async function resend(req: RouteRequest): Promise<Response> {
  const refused = foreignPost(req);
  if (refused) return refused;
  await readText(req.request, 4096);
  const copy = req.ctx.dispatcher.resend(req.params.id!);
  if (!copy) return errorPage(404, 'Delivery not found', html`No delivery ${req.params.id}. ${back}`);
  return seeOther(`${transactionPath(copy.reference)}#${encodeURIComponent(copy.id)}`);
}

/** The dashboard: every transaction (filtered, in pages), its timeline, the moves allowed now, and every delivery attempt with Resend (loopback clients only). */
export const dashboardRoutes: Route[] = [
  { method: 'GET', path: '/_dashboard', access: 'local', handle: overview },
  { method: 'GET', path: '/_dashboard/transactions/:reference', access: 'local', handle: detail },
  { method: 'POST', path: '/_dashboard/transactions/:reference/:action', access: 'local', handle: act },
  { method: 'POST', path: '/_dashboard/deliveries/:id/resend', access: 'local', handle: resend },
];

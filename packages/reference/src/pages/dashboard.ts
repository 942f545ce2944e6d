import { readText } from '../http/messages.js';
import type { Route, RouteRequest } from '../contract/context.js';
import { allowedActions, DASHBOARD_ACTIONS, detailPage, transactionPath, type DashboardAction } from './dashboard-detail.js';
import { overview } from './dashboard-list.js';
import { errorPage, html, seeOther } from './html.js';

const back = html`<a href="/_dashboard">Back to the dashboard</a>`;

function detail({ ctx, params }: RouteRequest): Response {
  const tx = ctx.transactions.find(params.reference!);
  if (!tx) return errorPage(404, 'Transaction not found', html`No transaction ${params.reference}. ${back}`);
  return detailPage(ctx, tx);
}

async function act(req: RouteRequest): Promise<Response> {
  await readText(req.request, 4096);
  const { ctx, params } = req;
  const tx = ctx.transactions.find(params.reference!);
  if (!tx) return errorPage(404, 'Transaction not found', html`No transaction ${params.reference}. ${back}`);
  const action = params.action as DashboardAction;
  if (!(DASHBOARD_ACTIONS as readonly string[]).includes(action) || !allowedActions(tx).includes(action)) {
    return errorPage(
      400,
      'Action refused',
      html`${action} is not allowed for ${tx.reference} (${tx.mode}, ${tx.status}). <a href="${transactionPath(tx.reference)}">Back to the transaction</a>`,
    );
  }
  const moved = ctx.move(tx, action, { note: 'from the dashboard' });
  if (!moved.ok)
    return errorPage(400, 'Action refused', html`${moved.message} <a href="${transactionPath(tx.reference)}">Back to the transaction</a>`);
  return seeOther(transactionPath(tx.reference));
}

async function resend(req: RouteRequest): Promise<Response> {
  await readText(req.request, 4096);
  const copy = req.ctx.dispatcher.resend(req.params.id!);
  if (!copy) return errorPage(404, 'Delivery not found', html`No delivery ${req.params.id}. ${back}`);
  return seeOther(`${transactionPath(copy.reference)}#${encodeURIComponent(copy.id)}`);
}

/**
 * The dashboard: every transaction (filtered, in pages), its timeline, the moves allowed now, and
 * every delivery attempt with Resend (loopback clients only; `pageGuard` refuses other hosts and
 * forms posted from elsewhere before these run).
 */
export const dashboardRoutes: Route[] = [
  { method: 'GET', path: '/_dashboard', access: 'local', handle: overview },
  { method: 'GET', path: '/_dashboard/transactions/:reference', access: 'local', handle: detail },
  { method: 'POST', path: '/_dashboard/transactions/:reference/:action', access: 'local', handle: act },
  { method: 'POST', path: '/_dashboard/deliveries/:id/resend', access: 'local', handle: resend },
];

import { ApiError, readText } from '../http.js';
import type { Route, RouteRequest } from '../router.js';
import { actionAtCheckoutPay } from '../scenarios.js';
import { PAYMENT_METHODS, type Transaction } from '../transactions.js';
import { html, page, seeOther } from './html.js';

function transactionOf({ ctx, params }: RouteRequest): Transaction {
  const tx = ctx.transactions.find(params.reference!);
  if (!tx) throw new ApiError(404, `No transaction ${params.reference}: check the checkout link.`);
  return tx;
}

const MESSAGES: Record<string, string> = {
  completed: 'Payment completed. You can close this page.',
  failed: 'The payment failed.',
  cancelled: 'The payment was cancelled.',
};

function show(req: RouteRequest): Response {
  const tx = transactionOf(req);
  // Opening the checkout is what moves a pending transaction to processing.
  if (tx.status === 'pending') req.ctx.move(tx, 'open');
  const merchant = req.ctx.merchants.get(tx.merchantId);
  const base = `/checkout/${encodeURIComponent(tx.reference)}`;
  const open = tx.status === 'processing';
  const body = html`<div class="box">
<h1>Pay ${merchant?.name ?? ''}</h1>
<p><strong id="amount">${tx.amount} ${tx.currency}</strong></p>
<p>Order <code>${tx.merchantReference}</code> · reference <code>${tx.reference}</code>${tx.mode === 'sandbox' ? html` · <em>sandbox</em>` : ''}</p>
<p>Status: <span class="status" id="status">${tx.status}</span></p>
${
  open
    ? html`<form method="post" action="${base}/pay">
<label>Payment method <select name="paymentMethod">${PAYMENT_METHODS.map((m) => html`<option value="${m}">${m}</option>`)}</select></label><br>
<button id="pay" type="submit">Pay ${tx.amount} ${tx.currency}</button></form>
<form method="post" action="${base}/cancel"><button id="cancel" type="submit">Cancel</button></form>`
    : html`<p id="message">${MESSAGES[tx.status] ?? `This transaction is ${tx.status}.`}</p>`
}
</div>`;
  return page(`Checkout ${tx.reference}`, body);
}

async function pay(req: RouteRequest): Promise<Response> {
  const tx = transactionOf(req);
  const form = new URLSearchParams(await readText(req.request, 4096));
  const chosen = form.get('paymentMethod') ?? 'telebirr';
  const paymentMethod = (PAYMENT_METHODS as readonly string[]).includes(chosen) ? chosen : 'telebirr';
  // A second click finds the transaction already moved; the page then shows where it stands.
  req.ctx.move(tx, actionAtCheckoutPay(tx.mode, tx.customer.phone), { note: 'at checkout', paymentMethod });
  return seeOther(`/checkout/${encodeURIComponent(tx.reference)}`);
}

function cancel(req: RouteRequest): Response {
  const tx = transactionOf(req);
  req.ctx.move(tx, 'cancel', { note: 'at checkout' });
  return seeOther(`/checkout/${encodeURIComponent(tx.reference)}`);
}

/** The hosted checkout page at `checkoutUrl`, where a person pays or cancels. */
export const checkoutRoutes: Route[] = [
  { method: 'GET', path: '/checkout/:reference', access: 'public', handle: show },
  { method: 'POST', path: '/checkout/:reference/pay', access: 'public', handle: pay },
  { method: 'POST', path: '/checkout/:reference/cancel', access: 'public', handle: cancel },
];

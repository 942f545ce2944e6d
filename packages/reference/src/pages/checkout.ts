import { readText } from '../http/messages.js';
import type { Route, RouteRequest } from '../contract/context.js';
import { checkoutPay, sandboxPhone } from '../domain/scenarios.js';
import { PAYMENT_METHODS } from '../domain/providers.js';
import type { Transaction } from '../domain/transactions.js';
import { errorPage, html, page, seeOther } from './html.js';

const MESSAGES: Record<string, string> = {
  completed: 'Payment completed. You can close this page.',
  failed: 'The payment failed.',
  cancelled: 'The payment was cancelled.',
};

/** Problems shown at the top of the page (`?error=`): fixed texts, nothing from the URL is echoed. */
const PROBLEMS: Record<string, string> = {
  'otp-missing': 'Enter the one-time password (OTP) sent to your phone to pay.',
  'otp-wrong': 'That one-time password (OTP) is not right: nothing was paid. Check it and try again.',
};

const path = (tx: Transaction) => `/checkout/${encodeURIComponent(tx.reference)}`;

function notFound(reference: string): Response {
  return errorPage(
    404,
    'Checkout not found',
    html`There is no payment with the reference <code>${reference}</code>. Check the link you followed, or go back to the shop and start again.`,
  );
}

/** A link back to the merchant, only to an http(s) address. */
function returnLink(tx: Transaction) {
  if (!tx.returnUrl || !/^https?:\/\//i.test(tx.returnUrl)) return '';
  return html`<p><a id="return" href="${tx.returnUrl}">Return to merchant</a></p>`;
}

function payForm(tx: Transaction) {
  const base = path(tx);
  const scenario = sandboxPhone(tx.mode, tx.customer.phone);
  const otp = scenario?.otp
    ? html`<p><label>One-time password (OTP) sent to ${tx.customer.phone}<br><input id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" maxlength="12"></label></p>
<p class="hint">Sandbox test number: ${scenario.description}.</p>`
    : '';
  return html`<form method="post" action="${base}/pay">
<p><label>Payment method <select name="paymentMethod">${PAYMENT_METHODS.map((m) => html`<option value="${m}">${m}</option>`)}</select></label></p>
${otp}<button id="pay" type="submit">Pay ${tx.amount} ${tx.currency}</button><button id="fail" type="submit" formaction="${base}/fail" formnovalidate>Fail</button></form>
<form method="post" action="${base}/cancel"><button id="cancel" type="submit">Cancel</button></form>`;
}

function show(req: RouteRequest): Response {
  const tx = req.ctx.transactions.find(req.params.reference!);
  if (!tx) return notFound(req.params.reference!);
  // Opening the checkout is what moves a pending transaction to processing.
  if (tx.status === 'pending') req.ctx.move(tx, 'open');
  const merchant = req.ctx.merchants.get(tx.merchantId);
  const open = tx.status === 'processing';
  const problem = PROBLEMS[req.url.searchParams.get('error') ?? ''];
  const body = html`<div class="box">
<h1>Pay <strong id="amount">${tx.amount} ${tx.currency}</strong>${merchant ? html` to <span id="merchant">${merchant.name}</span>` : ''}</h1>
<p>Order <code>${tx.merchantReference}</code> · reference <code>${tx.reference}</code>${tx.mode === 'sandbox' ? html` · <em>sandbox</em>` : ''}</p>
<p>Status: <span class="status" id="status">${tx.status}</span></p>
${open && problem ? html`<p class="error" id="error" role="alert">${problem}</p>` : ''}
${open ? payForm(tx) : html`<p id="message">${MESSAGES[tx.status] ?? `This transaction is ${tx.status}.`}</p>${returnLink(tx)}`}
</div>`;
  return page(`Checkout ${tx.reference}`, body);
}

async function form(req: RouteRequest): Promise<URLSearchParams> {
  return new URLSearchParams(await readText(req.request, 4096));
}

function chosenMethod(fields: URLSearchParams): string {
  const chosen = fields.get('paymentMethod') ?? 'telebirr';
  return (PAYMENT_METHODS as readonly string[]).includes(chosen) ? chosen : 'telebirr';
}

async function pay(req: RouteRequest): Promise<Response> {
  const tx = req.ctx.transactions.find(req.params.reference!);
  if (!tx) return notFound(req.params.reference!);
  const fields = await form(req);
  const outcome = checkoutPay(tx.mode, tx.customer.phone, fields.get('otp'));
  // A wrong or missing OTP moves nothing: the page says so and asks again.
  if (!outcome.ok) return tx.status === 'processing' ? seeOther(`${path(tx)}?error=${outcome.problem}`) : seeOther(path(tx));
  // A second click finds the transaction already moved; the page then shows where it stands.
  req.ctx.move(tx, outcome.action, { note: 'at checkout', paymentMethod: chosenMethod(fields), errorCode: outcome.errorCode });
  return seeOther(path(tx));
}

async function fail(req: RouteRequest): Promise<Response> {
  const tx = req.ctx.transactions.find(req.params.reference!);
  if (!tx) return notFound(req.params.reference!);
  const fields = await form(req);
  req.ctx.move(tx, 'fail', { note: 'Fail pressed at checkout', paymentMethod: chosenMethod(fields) });
  return seeOther(path(tx));
}

function cancel(req: RouteRequest): Response {
  const tx = req.ctx.transactions.find(req.params.reference!);
  if (!tx) return notFound(req.params.reference!);
  req.ctx.move(tx, 'cancel', { note: 'at checkout' });
  return seeOther(path(tx));
}

/**
 * The hosted checkout page at `checkoutUrl`, where a person pays (with the OTP of a sandbox test
 * number), fails or cancels. A link from any site opens it; `pageGuard` refuses other hosts and
 * forms posted from elsewhere before these run.
 */
export const checkoutRoutes: Route[] = [
  { method: 'GET', path: '/checkout/:reference', access: 'public', handle: show },
  { method: 'POST', path: '/checkout/:reference/pay', access: 'public', handle: pay },
  { method: 'POST', path: '/checkout/:reference/fail', access: 'public', handle: fail },
  { method: 'POST', path: '/checkout/:reference/cancel', access: 'public', handle: cancel },
];

import {
  API_MESSAGES,
  DEFAULT_PAGE_SIZE,
  initializeInputSchema,
  listQuerySchema,
  serviceFeeFor,
  type InitializeResult,
  type ListPage,
  type Timeline,
} from '@payhook/core/api';
import { callbackUrlProblem } from '../callback-url.js';
import { ApiError, invalid, readJson, success } from '../http.js';
import { canonicalJson } from '../idempotency.js';
import type { Route, RouteRequest } from '../router.js';
import { actionAtInitialize } from '../scenarios.js';
import { toRecord, type Transaction } from '../transactions.js';

const IDEMPOTENCY_HEADER = 'x-idempotency-key';

/** The transaction of `:reference` under the caller's merchant and mode, or 404. */
function transactionOf({ ctx, caller, params }: RouteRequest): Transaction {
  const tx = ctx.transactions.get(caller.merchant.id, caller.mode, params.reference!);
  if (!tx) {
    throw new ApiError(
      404,
      `No transaction ${params.reference} under this account: check the reference, and that the key's mode (${caller.mode}) is the one the transaction was made in.`,
    );
  }
  return tx;
}

async function initialize(req: RouteRequest): Promise<Response> {
  const { ctx, caller, request, url } = req;
  const body = await readJson(request);
  const key = request.headers.get(IDEMPOTENCY_HEADER);
  if (key !== null && (key.length === 0 || key.length > 255)) {
    throw new ApiError(400, `${IDEMPOTENCY_HEADER} must be 1 to 255 characters.`);
  }
  const scope = `${caller.merchant.id}:${caller.mode}`;
  const fingerprint = canonicalJson(body);
  if (key !== null) {
    const seen = ctx.idempotency.lookup(scope, key, fingerprint);
    if (seen.kind === 'conflict') throw new ApiError(409, seen.message);
    if (seen.kind === 'replay') {
      return new Response(seen.response.body, {
        status: seen.response.status,
        headers: { 'content-type': 'application/json; charset=utf-8', 'idempotent-replayed': 'true' },
      });
    }
  }
  const parsed = initializeInputSchema.safeParse(body);
  if (!parsed.success) throw invalid(parsed.error);
  const input = parsed.data;
  if (!caller.merchant.paymentSourceActive) {
    throw new ApiError(404, 'No active payment source for this account: activate a payment source (paymentSourceActive: true in the merchant config).');
  }
  if (input.callbackUrl !== undefined) {
    const problem = callbackUrlProblem(input.callbackUrl, ctx.allowHttpCallbacks);
    if (problem) throw new ApiError(400, problem);
  }
  const origin = ctx.publicUrl ?? url.origin;
  const tx = ctx.transactions.create(
    {
      merchantId: caller.merchant.id,
      mode: caller.mode,
      merchantReference: input.merchantReference,
      amount: input.amount,
      serviceFee: serviceFeeFor(input.amount),
      currency: input.currencyCode,
      customer: { name: input.customerName ?? '', email: input.customerEmail ?? '', phone: input.customerPhone },
      callbackUrl: input.callbackUrl,
      createdAt: ctx.clock.now(),
    },
    (reference) => `${origin}/checkout/${reference}`,
  );
  const scenario = actionAtInitialize(tx.mode, input.customerPhone);
  if (scenario) ctx.move(tx, scenario, { note: 'sandbox test number', paymentMethod: 'telebirr' });
  const result: InitializeResult = { reference: tx.reference, checkoutUrl: tx.checkoutUrl };
  const response = success(result, 201);
  if (key !== null) ctx.idempotency.save(scope, key, fingerprint, { status: 201, body: JSON.stringify({ status: 'success', data: result }) });
  return response;
}

function verify(req: RouteRequest): Response {
  const tx = transactionOf(req);
  if (tx.status !== 'completed') {
    throw new ApiError(400, `Transaction ${tx.reference} is ${tx.status}, not completed: verify succeeds only once the payment has completed.`);
  }
  return success(toRecord(tx));
}

function cancel(req: RouteRequest): Response {
  const tx = transactionOf(req);
  const moved = req.ctx.move(tx, 'cancel', { note: 'via the API' });
  if (!moved.ok) throw new ApiError(400, moved.message);
  return success(toRecord(tx));
}

function list({ ctx, caller, url }: RouteRequest): Response {
  const parsed = listQuerySchema.safeParse(Object.fromEntries(url.searchParams));
  if (!parsed.success) throw invalid(parsed.error);
  const q = parsed.data;
  const limit = q.limit ?? DEFAULT_PAGE_SIZE;
  // A cursor is only good for the query that made it.
  const binding = [caller.merchant.id, caller.mode, q.from?.toISOString(), q.to?.toISOString(), q.currency, q.status, limit].join('|');
  let before: number | undefined;
  if (q.cursor !== undefined) {
    const decoded = ctx.cursors.decode(q.cursor, binding);
    if (!decoded.ok) throw new ApiError(400, decoded.reason === 'expired' ? API_MESSAGES.cursorExpired : API_MESSAGES.cursor);
    before = decoded.position;
  }
  const { items, more } = ctx.transactions.list({
    merchantId: caller.merchant.id,
    mode: caller.mode,
    from: q.from,
    to: q.to,
    currency: q.currency,
    status: q.status,
    before,
    limit,
  });
  const page: ListPage = {
    items: items.map(toRecord),
    nextCursor: more ? ctx.cursors.encode(items[items.length - 1]!.seq, binding) : null,
  };
  return success(page);
}

function retrieve(req: RouteRequest): Response {
  return success(toRecord(transactionOf(req)));
}

function timeline(req: RouteRequest): Response {
  const tx = transactionOf(req);
  const data: Timeline = { reference: tx.reference, entries: tx.timeline };
  return success(data);
}

/** The six endpoints of section 4, under `/v1` (section 9). */
export const transactionRoutes: Route[] = [
  { method: 'POST', path: '/v1/transactions/initialize', access: 'api', permission: 'transactions:initialize', handle: initialize },
  { method: 'GET', path: '/v1/transactions', access: 'api', permission: 'transactions:read', handle: list },
  { method: 'GET', path: '/v1/transactions/:reference', access: 'api', permission: 'transactions:read', handle: retrieve },
  { method: 'GET', path: '/v1/transactions/:reference/verify', access: 'api', permission: 'transactions:verify', handle: verify },
  { method: 'POST', path: '/v1/transactions/:reference/cancel', access: 'api', permission: 'transactions:cancel', handle: cancel },
  { method: 'GET', path: '/v1/transactions/:reference/timeline', access: 'api', permission: 'transactions:read', handle: timeline },
];

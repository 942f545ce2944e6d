import { isIP } from 'node:net';
import {
  API_MESSAGES,
  initializeInputSchema,
  LIST_PARAM_MESSAGES,
  listQuerySchema,
  PAGE_SIZE,
  serviceFeeFor,
  type InitializeResult,
  type ListPage,
  type Timeline,
} from '@payhook/core/api';
import { callbackUrlProblem, classifyAddress } from '../delivery/callback-url.js';
import { ApiError, invalid, json, noContent, readJson } from '../http/messages.js';
import { canonicalJson } from '../domain/idempotency.js';
import type { Route, RouteRequest } from '../contract/context.js';
import { actionAtInitialize } from '../domain/scenarios.js';
import { toRecord, type Transaction } from '../domain/transactions.js';

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

/**
 * Whether checkout may send the customer back to `value`: https, or http to a loopback host when
 * the service runs with `allowHttpCallbacks`. A browser follows it, not the service, so private
 * addresses are fine here (no SSRF).
 */
function returnUrlAllowed(value: string, allowHttp: boolean): boolean {
  const url = new URL(value);
  if (url.protocol === 'https:') return true;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const loopback = host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && classifyAddress(host) === 'loopback');
  return url.protocol === 'http:' && allowHttp && loopback;
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
    throw new ApiError(
      404,
      'No active payment source for this account: activate a payment source (paymentSourceActive: true in the merchant config).',
    );
  }
  if (input.callbackUrl !== undefined) {
    const problem = callbackUrlProblem(input.callbackUrl, ctx.allowHttpCallbacks);
    if (problem) throw new ApiError(400, problem);
  }
  if (input.returnUrl !== undefined && !returnUrlAllowed(input.returnUrl, ctx.allowHttpCallbacks)) {
    throw new ApiError(400, API_MESSAGES.returnUrl);
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
      customer: {
        name: `${input.firstName ?? ''} ${input.lastName ?? ''}`.trim(),
        email: input.email ?? '',
        phone: input.customerPhone,
      },
      callbackUrl: input.callbackUrl,
      returnUrl: input.returnUrl,
      createdAt: ctx.clock.now(),
    },
    (reference) => `${origin}/checkout/${reference}`,
  );
  const scenario = actionAtInitialize(tx.mode, input.customerPhone);
  if (scenario) ctx.move(tx, scenario.action, { note: 'sandbox test number', paymentMethod: 'telebirr', errorCode: scenario.errorCode });
  // 200, bare, as both SDKs' recorded initialize responses are (go-sdk client_test.go sessionJSON).
  const result: InitializeResult = {
    reference: tx.reference,
    checkoutUrl: tx.checkoutUrl,
    status: 'success',
    expiresAt: new Date(tx.expiresAt).toISOString(),
  };
  if (key !== null) ctx.idempotency.save(scope, key, fingerprint, { status: 200, body: JSON.stringify(result) });
  return json(result);
}

function verify(req: RouteRequest): Response {
  const tx = transactionOf(req);
  if (tx.status !== 'completed') {
    throw new ApiError(
      400,
      `Transaction ${tx.reference} is ${tx.status}, not completed: verify succeeds only once the payment has completed.`,
    );
  }
  return json(toRecord(tx));
}

function cancel(req: RouteRequest): Response {
  const tx = transactionOf(req);
  const moved = req.ctx.move(tx, 'cancel');
  if (!moved.ok) throw new ApiError(400, moved.message);
  return noContent();
}

/** The query as one value per name; a parameter given twice is a 400 naming it. */
function queryOf(url: URL): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    if (Object.hasOwn(query, name)) throw new ApiError(400, LIST_PARAM_MESSAGES.repeated(name));
    query[name] = value;
  }
  return query;
}

function list({ ctx, caller, url }: RouteRequest): Response {
  const parsed = listQuerySchema.safeParse(queryOf(url));
  if (!parsed.success) throw invalid(parsed.error);
  const q = parsed.data;
  // A cursor is only good for the query that made it.
  const binding = [caller.merchant.id, caller.mode, q.from?.toISOString(), q.to?.toISOString(), q.currency, q.status].join('|');
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
    limit: PAGE_SIZE,
  });
  const nextCursor = more ? ctx.cursors.encode(items[items.length - 1]!.seq, binding) : null;
  const page: ListPage = { data: items.map(toRecord), nextCursor, hasMore: nextCursor !== null };
  return json(page);
}

function retrieve(req: RouteRequest): Response {
  return json(toRecord(transactionOf(req)));
}

function timeline(req: RouteRequest): Response {
  const tx = transactionOf(req);
  const data: Timeline = { reference: tx.reference, events: tx.timeline.map((entry) => ({ ...entry })) };
  return json(data);
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

import { z } from 'zod';
import { faultInputSchema } from '../delivery/faults.js';
import { ApiError, invalid, json, readJson } from '../http/messages.js';
import type { Route, RouteRequest } from '../contract/context.js';
import { PAYMENT_METHODS } from '../domain/providers.js';
import { toRecord } from '../domain/transactions.js';
import { isAction, TRANSITIONS } from '../domain/transitions.js';
import { generateWebhookSecret } from '../domain/merchants.js';

const actionBodySchema = z.object({
  paymentMethod: z.enum(PAYMENT_METHODS, { error: `paymentMethod must be one of: ${PAYMENT_METHODS.join(', ')}` }).optional(),
  errorCode: z
    .string({ error: 'errorCode must be a string, such as "INSUFFICIENT_FUNDS"' })
    .regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'errorCode must be upper-case letters, digits and underscores, such as "INSUFFICIENT_FUNDS"')
    .optional(),
  errorMessage: z.string({ error: 'errorMessage must be a string' }).max(500, 'errorMessage must be at most 500 characters').optional(),
});

const advanceSchema = z.object({
  ms: z
    .number({ error: 'ms is required: the number of milliseconds to move the clock forward, e.g. {"ms": 60000}' })
    .int('ms must be a whole number of milliseconds')
    .min(0, 'ms must not be negative')
    .max(366 * 24 * 60 * 60 * 1000, 'ms must be at most one year'),
});

async function move(req: RouteRequest): Promise<Response> {
  const { ctx, caller, params, request } = req;
  const action = params.action!;
  if (!isAction(action)) {
    throw new ApiError(404, `Unknown sandbox action "${action}": use one of ${Object.keys(TRANSITIONS).join(', ')}.`);
  }
  const body = actionBodySchema.safeParse(await readJson(request, { optional: true }));
  if (!body.success) throw invalid(body.error);
  const tx = ctx.transactions.get(caller.merchant.id, 'sandbox', params.reference!);
  if (!tx) throw new ApiError(404, `No sandbox transaction ${params.reference} under this account: check the reference.`);
  const { errorCode, errorMessage } = body.data;
  const paymentMethod = body.data.paymentMethod ?? tx.paymentMethod ?? 'telebirr';
  const moved = ctx.move(tx, action, { note: 'sandbox control', paymentMethod, errorCode, errorMessage });
  if (!moved.ok) throw new ApiError(400, moved.message);
  return json(toRecord(tx));
}

function deliveries({ ctx, caller, url }: RouteRequest): Response {
  const reference = url.searchParams.get('reference') ?? undefined;
  return json(ctx.dispatcher.list({ merchantId: caller.merchant.id, mode: 'sandbox', reference }));
}

async function advance({ ctx, request }: RouteRequest): Promise<Response> {
  const body = advanceSchema.safeParse(await readJson(request));
  if (!body.success) throw invalid(body.error);
  await ctx.clock.advance(body.data.ms);
  return json({ now: new Date(ctx.clock.now()).toISOString() });
}

async function addFault({ ctx, caller, request }: RouteRequest): Promise<Response> {
  const body = faultInputSchema.safeParse(await readJson(request));
  if (!body.success) throw invalid(body.error);
  return json(ctx.faults.add(caller.merchant.id, body.data), 201);
}

/**
 * Roll the merchant's webhook secret, as a dashboard's "roll secret" does: every delivery attempt
 * from now on (retries too) is signed with the new one, which the answer carries once. The
 * interface does not show how secrets are issued; a merchant rotating keeps both in its receiver
 * until the old one's deliveries are done.
 */
function rollWebhookSecret({ caller }: RouteRequest): Response {
  caller.merchant.webhookSecret = generateWebhookSecret();
  return json({ webhookSecret: caller.merchant.webhookSecret });
}

/** Sandbox control (sandbox keys only): move transactions, read deliveries, the clock, faults. Bodies are bare, like /v1's. */
export const sandboxRoutes: Route[] = [
  { method: 'POST', path: '/_sandbox/transactions/:reference/:action', access: 'sandbox', handle: move },
  { method: 'GET', path: '/_sandbox/deliveries', access: 'sandbox', handle: deliveries },
  {
    method: 'GET',
    path: '/_sandbox/clock',
    access: 'sandbox',
    handle: ({ ctx }) => json({ now: new Date(ctx.clock.now()).toISOString() }),
  },
  { method: 'POST', path: '/_sandbox/clock/advance', access: 'sandbox', handle: advance },
  { method: 'POST', path: '/_sandbox/webhook-secret/roll', access: 'sandbox', handle: rollWebhookSecret },
  { method: 'GET', path: '/_sandbox/faults', access: 'sandbox', handle: ({ ctx, caller }) => json(ctx.faults.list(caller.merchant.id)) },
  { method: 'POST', path: '/_sandbox/faults', access: 'sandbox', handle: addFault },
  {
    method: 'DELETE',
    path: '/_sandbox/faults',
    access: 'sandbox',
    handle: ({ ctx, caller }) => {
      ctx.faults.clear(caller.merchant.id);
      return json({ cleared: true });
    },
  },
];

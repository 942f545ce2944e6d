import { ApiError, json } from '../http/messages.js';
import type { Route, RouteRequest } from '../contract/context.js';

function resend({ ctx, caller, params }: RouteRequest): Response {
  const original = ctx.dispatcher.list({ merchantId: caller.merchant.id, mode: 'sandbox' }).find((d) => d.id === params.id);
  if (!original) {
    throw new ApiError(404, `No sandbox delivery ${params.id} under this account: list them with GET /_sandbox/deliveries.`);
  }
  return json(ctx.dispatcher.resend(original.id), 201);
}

function one({ ctx, caller, params }: RouteRequest): Response {
  const found = ctx.dispatcher.list({ merchantId: caller.merchant.id, mode: 'sandbox' }).find((d) => d.id === params.id);
  if (!found) throw new ApiError(404, `No sandbox delivery ${params.id} under this account: list them with GET /_sandbox/deliveries.`);
  return json(found);
}

/** Sandbox control of single deliveries: read one, and deliver it again (`payhook-reference resend`). */
export const deliveryRoutes: Route[] = [
  { method: 'GET', path: '/_sandbox/deliveries/:id', access: 'sandbox', handle: one },
  { method: 'POST', path: '/_sandbox/deliveries/:id/resend', access: 'sandbox', handle: resend },
];

import { ApiError } from '../http/messages.js';
import { createRouter } from '../routes/router.js';
import { checkoutRoutes } from '../pages/checkout.js';
import { dashboardRoutes } from '../pages/dashboard.js';
import { deliveryRoutes } from '../routes/deliveries.js';
import { providerRoutes } from '../routes/providers.js';
import { sandboxRoutes } from '../routes/sandbox.js';
import { transactionRoutes } from '../routes/transactions.js';
import { refusal, type RateSettings } from './access.js';
import type { Listener, RouteRequest, ServiceContext } from '../contract/context.js';

/** Every route the service answers: the API, sandbox control, the checkout page and the dashboard. */
const ROUTES = [...transactionRoutes, ...providerRoutes, ...sandboxRoutes, ...deliveryRoutes, ...checkoutRoutes, ...dashboardRoutes];

export type RequestHandler = (request: Request, remoteAddress: string, listener: Listener | undefined) => Promise<Response>;

/**
 * The service's routing: find the route (a 404 or 405 in the error envelope otherwise), run the
 * access checks that guard it, then its handler. Failures are thrown as ApiError.
 */
export function createRequestHandler(ctx: ServiceContext, rate: RateSettings): RequestHandler {
  const route = createRouter(ROUTES);
  return async (request, remoteAddress, listener) => {
    const url = new URL(request.url);
    const match = route(request.method, url.pathname);
    if (match.kind === 'not-found') {
      const version = /^\/(v\d+)(?:\/|$)/.exec(url.pathname)?.[1];
      if (version && version !== 'v1') throw new ApiError(404, `Unknown API version ${version}: this service speaks /v1.`);
      throw new ApiError(
        404,
        `No route for ${request.method} ${url.pathname}: see the endpoints under /v1/transactions and /v1/payment-providers.`,
      );
    }
    if (match.kind === 'method-not-allowed') {
      throw new ApiError(405, `${request.method} is not allowed on ${url.pathname}: use ${match.allow.join(' or ')}.`, {
        allow: match.allow.join(', '),
      });
    }
    const { route: r, params } = match;
    const req = { request, url, params, remoteAddress, listener, ctx } as RouteRequest;
    // Only key routes read the Authorization header; pages never do.
    const keyed = r.access === 'api' || r.access === 'sandbox';
    const auth = keyed ? ctx.merchants.authenticate(request.headers.get('authorization')) : null;
    const refused = refusal({ req, route: r, auth, rate });
    if (refused) return refused;
    if (auth?.ok) req.caller = auth;
    return r.handle(req);
  };
}

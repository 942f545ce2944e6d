import { isLoopback, type Authentication } from '../domain/merchants.js';
import { ApiError } from '../http/messages.js';
import { pageGuard } from '../pages/page-guard.js';
import type { Access, Caller, Route, RouteRequest } from '../contract/context.js';

/** The rate limit's settings, for the 429's wording (the limiter itself is `ctx.limiter`). */
export interface RateSettings {
  limit: number;
  windowMs: number;
}

/** What an access check sees: the request, its route, and on `api` and `sandbox` routes the key it came with. */
export interface Gate {
  req: RouteRequest;
  route: Route;
  /** The Authorization header read, on `api` and `sandbox` routes; null on pages. */
  auth: Authentication | null;
  rate: RateSettings;
}

/** One row: the routes it guards (`when`), and its refusal, or null to let the request on. */
interface AccessCheck {
  when: readonly Access[];
  answer(gate: Gate): ApiError | Response | null;
}

/** The key, in rows that run only after `authenticated` has let the request on. */
const caller = (gate: Gate): Caller => gate.auth as Caller;

/**
 * Every access check, in the order they run; the first refusal answers. The order is part of the
 * contract: a request is counted against the rate limit only once its key, address and mode are
 * good, and a key without the route's permission still counts.
 */
const ACCESS_CHECKS: readonly AccessCheck[] = [
  {
    when: ['local'],
    answer: ({ req }) =>
      isLoopback(req.remoteAddress)
        ? null
        : new ApiError(403, 'The dashboard is served to loopback clients only: open it on the machine that runs the service.'),
  },
  { when: ['local', 'public'], answer: ({ req }) => pageGuard(req) },
  {
    when: ['api', 'sandbox'],
    answer: ({ auth }) => (auth === null || auth.ok ? null : new ApiError(401, auth.message, { 'www-authenticate': 'Bearer' })),
  },
  {
    when: ['api', 'sandbox'],
    answer: (gate) =>
      caller(gate).merchant.allows(gate.req.remoteAddress)
        ? null
        : new ApiError(
            403,
            `Requests from ${gate.req.remoteAddress} are not allowed for this account: add the address to the merchant's IP whitelist.`,
          ),
  },
  {
    when: ['sandbox'],
    answer: (gate) =>
      caller(gate).mode === 'sandbox'
        ? null
        : new ApiError(403, 'Sandbox control needs a sandbox key (sk_test_…); live transactions cannot be moved by hand.'),
  },
  {
    when: ['api'],
    answer: (gate) => {
      const hit = gate.req.ctx.limiter.hit(caller(gate).keyHash);
      if (hit.ok) return null;
      const { limit, windowMs } = gate.rate;
      return new ApiError(
        429,
        `Rate limit exceeded: ${limit} requests per ${windowMs / 1000} seconds per API key. Retry after ${hit.retryAfterSeconds} s and back off exponentially.`,
        { 'retry-after': String(hit.retryAfterSeconds) },
      );
    },
  },
  {
    when: ['api', 'sandbox'],
    answer: (gate) => {
      const { permission } = gate.route;
      if (!permission || caller(gate).permissions.has(permission)) return null;
      // "Missing <permission> permission", as the service words it (go-sdk client_test.go TestAMissingPermissionIsPermissionDenied).
      return new ApiError(403, `Missing ${permission} permission: use an API key that holds it.`);
    },
  },
];

/**
 * Run the access checks that guard `gate.route`: an ApiError is thrown (the service answers it in
 * the error envelope), a page's refusal is returned as it is, null lets the request on.
 */
export function refusal(gate: Gate): Response | null {
  for (const check of ACCESS_CHECKS) {
    if (!check.when.includes(gate.route.access)) continue;
    const answer = check.answer(gate);
    if (answer instanceof ApiError) throw answer;
    if (answer) return answer;
  }
  return null;
}

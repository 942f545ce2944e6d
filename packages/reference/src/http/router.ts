import type { Authentication } from './merchants.js';
import type { Permission } from './merchants.js';
import type { ServiceContext } from './context.js';
import type { Listener } from './pages/page-guard.js';

/**
 * Who may call a route: `api` (a key, the whitelist, the rate limit and `permission`),
 * `sandbox` (a sandbox key and the whitelist), `public` (anyone: the checkout page),
 * `local` (loopback clients only: the dashboard). `public` and `local` routes are pages: they
 * answer only to the host names the service was started for, and take forms from themselves only
 * (`pageGuard`).
 */
export type Access = 'api' | 'sandbox' | 'public' | 'local';

export type Caller = Extract<Authentication, { ok: true }>;

export interface RouteRequest {
  request: Request;
  url: URL;
  params: Record<string, string>;
  remoteAddress: string;
  /** The address the server listens on, when served by `listen`. */
  listener?: Listener;
  ctx: ServiceContext;
  /** The authenticated key, on `api` and `sandbox` routes. */
  caller: Caller;
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** `/v1/transactions/:reference`; a `:name` segment matches one path segment. */
  path: string;
  access: Access;
  permission?: Permission;
  handle(req: RouteRequest): Promise<Response> | Response;
}

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'not-found' }
  | { kind: 'method-not-allowed'; allow: string[] };

/**
 * Match a method and path against routes. The first path pattern that matches decides, so list
 * literal paths (`/v1/transactions/initialize`) before parameters (`/v1/transactions/:reference`):
 * `GET /v1/transactions/initialize` is then a 405, not a lookup of a transaction named "initialize".
 *
 * @example
 * const match = createRouter(routes)('GET', '/v1/transactions/ref_1');
 */
export function createRouter(routes: Route[]): (method: string, pathname: string) => Match {
  const patterns: { path: string; regex: RegExp; names: string[]; routes: Route[] }[] = [];
  for (const route of routes) {
    let p = patterns.find((x) => x.path === route.path);
    if (!p) {
      const names: string[] = [];
      const source = route.path.replace(/:([a-zA-Z]+)/g, (_, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      p = { path: route.path, regex: new RegExp(`^${source}$`), names, routes: [] };
      patterns.push(p);
    }
    p.routes.push(route);
  }
  return (method, pathname) => {
    for (const p of patterns) {
      const m = p.regex.exec(pathname);
      if (!m) continue;
      const route = p.routes.find((r) => r.method === method.toUpperCase());
      if (!route) return { kind: 'method-not-allowed', allow: p.routes.map((r) => r.method) };
      let params: Record<string, string>;
      try {
        params = Object.fromEntries(p.names.map((name, i) => [name, decodeURIComponent(m[i + 1]!)]));
      } catch {
        return { kind: 'not-found' };
      }
      return { kind: 'found', route, params };
    }
    return { kind: 'not-found' };
  };
}

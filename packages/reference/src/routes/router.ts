import type { Route } from '../contract/context.js';

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

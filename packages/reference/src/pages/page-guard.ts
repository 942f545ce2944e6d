import { isIP } from 'node:net';
import type { Listener, PageHost, RouteRequest } from '../contract/context.js';
import { errorPage, html } from './html.js';

/** Names of this machine that no DNS answer can give to someone else. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** `host` (a Host header, `name` or `name:port`) as WHATWG URL reads it, or null when it is not one. */
function parseHost(host: string): { hostname: string; port: string; host: string } | null {
  if (host === '' || /[\s/?#@\\]/.test(host)) return null;
  try {
    const url = new URL(`http://${host}`);
    return { hostname: url.hostname, port: url.port, host: url.host };
  } catch {
    return null;
  }
}

/**
 * A `pageHosts` entry: a host name, with a port (`pay.local:8080`) or without (any port).
 *
 * @example
 * parsePageHost('pay.local:8080'); // { hostname: 'pay.local', port: '8080' }
 */
export function parsePageHost(value: string): PageHost {
  const parsed = parseHost(value);
  if (!parsed)
    throw new TypeError(
      `[@payhook/reference] pageHosts: "${value}" is not a host name; use a name such as pay.local or pay.local:8080 (no scheme, no path).`,
    );
  return { hostname: parsed.hostname, port: /:\d+$/.test(value) ? parsed.port : undefined };
}

/** The host of `publicUrl` (`https://pay.example.test` → `pay.example.test`, its own port only). */
export function publicUrlHost(publicUrl: string): PageHost {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    throw new TypeError(`[@payhook/reference] publicUrl: "${publicUrl}" is not a URL; use an origin such as https://pay.example.test.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(
      `[@payhook/reference] publicUrl: "${publicUrl}" is not an http(s) URL; use an origin such as https://pay.example.test.`,
    );
  }
  return { hostname: url.hostname, port: url.port };
}

const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Whether a request to `host` may reach a page: a name the service was started for, on its port.
 * An IP literal names no one else (DNS rebinding needs a name), so any passes; a name must be
 * listed: a loopback name, the listen address, the host of `publicUrl` or one of `pageHosts`.
 * Served in process without `listen`, the loopback names pass on any port.
 */
function allowedHost(host: { hostname: string; port: string }, configured: readonly PageHost[], listener: Listener | undefined): boolean {
  if (configured.some((h) => h.hostname === host.hostname && (h.port === undefined || h.port === host.port))) return true;
  const names = [...LOOPBACK_NAMES];
  if (listener) {
    const listening = parseHost(listener.host.includes(':') ? `[${listener.host}]:${listener.port}` : `${listener.host}:${listener.port}`);
    if (!listening || listening.port !== host.port) return false;
    names.push(listening.hostname);
  }
  return isIP(bare(host.hostname)) !== 0 || names.includes(host.hostname);
}

/** Whether a header naming where a request came from (Origin, Referer) names one of `own`. */
function fromOwn(value: string, own: readonly string[]): boolean {
  try {
    return own.includes(new URL(value).origin);
  } catch {
    return false;
  }
}

const refused = (why: string) => errorPage(403, 'Refused', html`${why}`);

/**
 * The one check in front of every page (the dashboard and the checkout, GET and POST): null to go
 * on, or a 403 page. A page answers only to the host names the service was started for, so a name
 * rebound to this machine (DNS rebinding) reads and moves nothing. A form post must come from the
 * page itself: each of Origin, Sec-Fetch-Site and Referer that the request carries must say this
 * origin (a browser sends them; curl sends none and passes).
 */
export function pageGuard({ request, url, ctx, listener }: RouteRequest): Response | null {
  const host = parseHost(request.headers.get('host') || url.host);
  if (!host || !allowedHost(host, ctx.pageHosts, listener)) {
    return refused('This page is not served under this address. Open it at the address the service printed when it started.');
  }
  if (request.method === 'GET' || request.method === 'HEAD') return null;
  // Behind a TLS proxy (publicUrl https://…) the page's origin is https, on the same host.
  const own = [`http://${host.host}`, `https://${host.host}`];
  const origin = request.headers.get('origin');
  const site = request.headers.get('sec-fetch-site');
  const referer = request.headers.get('referer');
  const foreign =
    (origin !== null && !own.includes(origin)) ||
    (site !== null && site !== 'same-origin' && site !== 'none') ||
    (referer !== null && !fromOwn(referer, own));
  if (foreign) return refused('This form was not sent from this page. Go back to the page, reload it and try again.');
  return null;
}

import { readBodyLimited, type BodyDeadline } from '@payhook/core/adapter';

/**
 * What keeps the board's actions to the people `authorize` lets in, from the pages the board
 * served them: a token in a cookie of the board's own, sent back in each form (double submit), and
 * no post that the browser says came from another site.
 */

const COOKIE = 'payhook_board';
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** A form the board sends is a few short fields; anything bigger is not one of its forms. */
export const MAX_FORM_BYTES = 4096;

/** The request's token, if its cookie holds a well-formed one. */
export function tokenOf(request: Request): string | undefined {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === COOKIE && value !== undefined && TOKEN.test(value)) return value;
  }
  return undefined;
}

/** A new token: 32 random bytes, base64url. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** The cookie that carries the token: only for the board's own path, never sent with a request from another site. */
export const tokenCookie = (token: string, path: string, secure: boolean): string =>
  `${COOKIE}=${token}; Path=${path || '/'}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;

/**
 * Why a post may not act, or undefined when it may: the browser says it came from another site
 * (`Sec-Fetch-Site`, or an `Origin` of another host), or its form's token is not its cookie's.
 */
export function refusal(request: Request, url: URL, form: URLSearchParams): string | undefined {
  const site = request.headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin') return 'a post from another site';
  const origin = request.headers.get('origin');
  // The host only: behind a proxy that ends TLS the board may see http:// where the browser sent https://.
  // The Host header too: Next builds request.url from its own hostname, not from the host the browser asked.
  const host = origin === null ? undefined : hostOf(origin);
  // "null" is an origin the browser hides (a policy, a sandbox): taken only where the browser also says same-origin.
  const hidden = origin === 'null' && site === 'same-origin';
  if (origin !== null && !hidden && host !== url.host && host !== request.headers.get('host')) return 'a post from another origin';
  const cookie = tokenOf(request);
  const sent = form.get('csrf');
  if (cookie === undefined || sent === null || !same(cookie, sent))
    return 'a post without the page’s token (reload the board and try again)';
  return undefined;
}

const hostOf = (origin: string): string | undefined => {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
};

/** Equal strings, compared in a time that does not say where they differ. */
function same(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The form a post sent, read with core's bounded reader up to MAX_FORM_BYTES (and within the
 * receiver's body deadline, when given): 'too-large' when it is not a form or is bigger,
 * 'too-slow' when it did not arrive in time.
 */
export async function readForm(request: Request, deadline?: BodyDeadline): Promise<URLSearchParams | 'too-large' | 'too-slow'> {
  const type = request.headers.get('content-type') ?? '';
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) return 'too-large';
  const bytes = deadline ? await readBodyLimited(request, MAX_FORM_BYTES, deadline) : await readBodyLimited(request, MAX_FORM_BYTES);
  return typeof bytes === 'string' ? bytes : new URLSearchParams(new TextDecoder().decode(bytes));
}

/** A name in `hosts`: a host name, with the one port it is served on, or any port. */
export interface BoardHost {
  hostname: string;
  port: string | undefined;
}

/** `value` (a Host header, `name` or `name:port`) as WHATWG URL reads it, or undefined when it is none. */
function parseHost(value: string): { hostname: string; port: string } | undefined {
  if (value === '' || /[\s/?#@\\]/.test(value)) return undefined;
  try {
    const url = new URL(`http://${value}`);
    return { hostname: url.hostname, port: url.port };
  } catch {
    return undefined;
  }
}

/** An entry of `hosts` (`pay.example.com`, `pay.example.com:8443`), or undefined when it is no host name. */
export function boardHost(value: unknown): BoardHost | undefined {
  const parsed = typeof value === 'string' ? parseHost(value) : undefined;
  return parsed && { hostname: parsed.hostname, port: /:\d+$/.test(value as string) ? parsed.port : undefined };
}

/** Where nodeBoard and fastifyBoard note the local address of the socket a request came on (one symbol for the ESM and CJS builds). */
const REACHED_AT = Symbol.for('@payhook/board: reached at');
export const noteReachedAt = (request: Request, address: string | undefined): Request =>
  address ? Object.defineProperty(request, REACHED_AT, { value: address }) : request;

/** Names no DNS answer can give to another site: localhost (and its subdomains, which browsers keep on this machine) and IP addresses. */
const ownName = (hostname: string) =>
  hostname === 'localhost' || hostname.endsWith('.localhost') || hostname.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(hostname);
const loopback = (address: string) => /^(?:127\.|::1$|::ffff:127\.)/i.test(address);

/**
 * Why the board does not answer a request addressed to this host (DNS rebinding: a hostile page
 * whose name now points at this machine), or undefined when it does. Loopback names and IP
 * addresses always pass. With `hosts`, only those names pass besides; without it, any name passes
 * unless the request came on a loopback socket (nodeBoard and fastifyBoard know it): a development
 * board on localhost. Proxy headers (X-Forwarded-*) do not open that door: a rebound page is the
 * same origin as its own name, so it may send them as it likes. A proxy on the same machine that
 * keeps the browser's Host names it in `hosts`.
 */
export function misdirected(request: Request, url: URL, hosts: readonly BoardHost[] | undefined): string | undefined {
  // The Host header first: Next builds request.url from its own hostname, not the host the browser asked.
  const host = parseHost(request.headers.get('host') || url.host);
  if (host === undefined) return 'its Host is no host name';
  if (ownName(host.hostname)) return undefined;
  if (hosts !== undefined)
    return hosts.some((h) => h.hostname === host.hostname && (h.port === undefined || h.port === host.port))
      ? undefined
      : 'its Host is not one of the board’s `hosts`';
  const at = (request as { [REACHED_AT]?: string })[REACHED_AT];
  if (at === undefined || !loopback(at)) return undefined;
  return 'it came on a loopback connection under another name than localhost (DNS rebinding?)';
}

/** Headers on every answer: a policy that runs only the board's own files, and no framing, sniffing, caching, or referrer to other sites. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: under it the browser sends `Origin: null` with the board's own posts.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Resolves a host name to every address it has (the shape of `dns.lookup` with `all: true`).
 * The dispatcher takes one so tests can map names without a DNS server.
 */
export type CallbackLookup = (hostname: string) => Promise<LookupAddress[]>;

/** `dns.lookup(hostname, { all: true })`: the system resolver, hosts file included. */
export const systemLookup: CallbackLookup = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (e, list) => (e ? reject(e) : resolve(list))));

/** Where a callback may be sent: the address that was checked, to connect to, and nothing else. */
export type CallbackTarget = { ok: true; url: URL; address: string; family: 4 | 6 } | { ok: false; problem: string };

// Addresses a callback must never reach: an attacker who sets callbackUrl would otherwise make the
// service POST into its own network (SSRF). Loopback is separate: the dev flag may allow it.
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const INTERNAL = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  INTERNAL.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['64:ff9b::', 96], // NAT64: reaches IPv4 addresses through a translator
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  INTERNAL.addSubnet(net, bits, 'ipv6');
}

/**
 * The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`, also written `::ffff:7f00:1`) or
 * IPv4-compatible (`::a.b.c.d`) IPv6 address, else the address as given.
 */
function unwrap(address: string): string {
  const a = address.toLowerCase();
  const m = /^(?:0{0,4}:){0,5}(?::|(?:0{0,4}:)?ffff:)((?:\d{1,3}\.){3}\d{1,3}|[0-9a-f]{1,4}:[0-9a-f]{1,4})$/.exec(a);
  if (!m || isIP(a) !== 6) return address;
  const tail = m[1]!;
  if (tail.includes('.')) return tail;
  const [hi, lo] = tail.split(':').map((h) => parseInt(h, 16)) as [number, number];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** `loopback`, `internal` (private, link-local, reserved…), or null for a public address. */
export function classifyAddress(address: string): 'loopback' | 'internal' | null {
  const a = unwrap(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  const family = isIP(a);
  if (family === 0) return 'internal';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (LOOPBACK.check(a, type)) return 'loopback';
  // An IPv6 address that still embeds an IPv4 one (::a.b.c.d handled above) or is unusual is checked as is.
  return INTERNAL.check(a, type) ? 'internal' : null;
}

const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** The URL's host without brackets, in lower case, without a trailing dot. */
const hostOf = (url: URL) =>
  url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');

/**
 * Why a callback URL is refused, or null when it may be used: HTTPS only; plain HTTP only to a
 * loopback host, and only when the service runs with `allowHttpCallbacks`. Whatever the scheme,
 * an address inside a private network (RFC 1918, link-local and cloud metadata, CGNAT, unique
 * local IPv6, IPv4-mapped forms of these…) is refused, and loopback only passes with the flag.
 * URL parsing already turns `2130706433`, `0177.0.0.1` and `0x7f.1` into `127.0.0.1`. Host names
 * are resolved and checked again where the dispatcher connects (`resolveCallbackTarget`).
 *
 * @example
 * callbackUrlProblem('http://127.0.0.1:3000/webhooks', false); // 'callbackUrl must use https: …'
 */
export function callbackUrlProblem(value: string, allowHttpCallbacks: boolean): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `callbackUrl must be an absolute https:// URL; got "${value}".`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return `callbackUrl must be an absolute https:// URL; got the scheme ${url.protocol}`;
  }
  if (url.protocol === 'http:' && !allowHttpCallbacks) {
    return 'callbackUrl must use https: plain http is refused (start the service with --allow-http-callbacks to allow http to loopback addresses during development).';
  }
  const host = hostOf(url);
  const kind = isIP(host) ? classifyAddress(host) : isLoopbackName(host) ? 'loopback' : null;
  if (kind === 'internal') return refusedAddress(host);
  if (kind === 'loopback' && !allowHttpCallbacks) return refusedLoopback(host);
  if (url.protocol === 'http:' && kind !== 'loopback') {
    return `callbackUrl may use http only for loopback hosts (localhost, 127.0.0.1, ::1); use https for ${host}.`;
  }
  return null;
}

const refusedAddress = (host: string) =>
  `callbackUrl may not point into a private network: ${host} is a private, link-local or reserved address; use a public https URL.`;
const refusedLoopback = (host: string) =>
  `callbackUrl may not point at this machine (${host} is loopback) unless the service runs with --allow-http-callbacks (development only).`;

/**
 * Check a callback URL where it is about to be used: the rules of `callbackUrlProblem`, then the
 * host name resolved and every address it has checked, so a name that points (or later re-points)
 * into a private network is refused. The answer names the one checked address to connect to, so a
 * second resolution cannot swap it (DNS rebinding).
 *
 * @example
 * const target = await resolveCallbackTarget(url, { allowLoopback: false });
 * if (target.ok) http.request(url, { lookup: pinnedTo(target) });
 */
export async function resolveCallbackTarget(
  value: string,
  options: { allowLoopback: boolean; lookup?: CallbackLookup },
): Promise<CallbackTarget> {
  const problem = callbackUrlProblem(value, options.allowLoopback);
  if (problem) return { ok: false, problem };
  const url = new URL(value);
  const host = hostOf(url);
  const family = isIP(host);
  if (family) return { ok: true, url, address: host, family: family as 4 | 6 };
  let addresses: LookupAddress[];
  try {
    addresses = await (options.lookup ?? systemLookup)(host);
  } catch (error) {
    return { ok: false, problem: `cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? String(error)}` };
  }
  if (addresses.length === 0) return { ok: false, problem: `cannot resolve ${host}: no addresses` };
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    if (kind === 'internal') return { ok: false, problem: `${host} resolves to ${address}: ${refusedAddress(address)}` };
    if (kind === 'loopback' && !options.allowLoopback)
      return { ok: false, problem: `${host} resolves to ${address}: ${refusedLoopback(address)}` };
  }
  const first = addresses[0]!;
  const checked = unwrap(first.address);
  return { ok: true, url, address: checked, family: isIP(checked) as 4 | 6 };
}

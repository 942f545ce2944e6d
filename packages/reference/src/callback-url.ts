import { isIP } from 'node:net';

/**
 * Why a callback URL is refused, or null when it may be used: HTTPS only; plain HTTP only to a
 * loopback host, and only when the service runs with `allowHttpCallbacks`.
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
  if (url.protocol === 'https:') return null;
  if (url.protocol !== 'http:') return `callbackUrl must be an absolute https:// URL; got the scheme ${url.protocol}`;
  if (!allowHttpCallbacks) {
    return 'callbackUrl must use https: plain http is refused (start the service with --allow-http-callbacks to allow http to loopback addresses during development).';
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
  return loopback ? null : `callbackUrl may use http only for loopback hosts (localhost, 127.0.0.1, ::1); use https for ${host}.`;
}

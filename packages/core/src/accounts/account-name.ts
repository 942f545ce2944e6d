import type { AccountSource } from '../settings/accounts-options.js';

/**
 * A merchant account's name, as a platform puts it in the callback URL's path or in a header of
 * its own: 1 to 64 ASCII letters, digits, `_` or `-`. Anything else (`..`, `%2F`, a look-alike
 * letter from another script, 10 KB of text) names no account, and is answered as one nobody knows.
 */
export const ACCOUNT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const isAccountName = (name: unknown): name is string => typeof name === 'string' && name.length <= 64 && ACCOUNT_NAME.test(name);

/**
 * The account a request names, unchecked: the last segment of its path (`/webhooks/epay/acct_7Q2`
 * names `acct_7Q2`; the query and fragment are not part of it), or the header's value. A header
 * sent twice (a list in Node) names none.
 *
 * @example
 * accountNamed('path', 'https://shop.example/webhooks/epay/acct_7Q2?x=1', () => undefined); // 'acct_7Q2'
 */
export function accountNamed(from: AccountSource, url: string | undefined, header: (name: string) => unknown): string | undefined {
  if (from !== 'path') {
    const value = header(from.header);
    return typeof value === 'string' ? value : undefined;
  }
  if (url === undefined) return undefined;
  let end = url.length;
  const query = url.indexOf('?');
  if (query >= 0) end = query;
  const hash = url.indexOf('#');
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(url.lastIndexOf('/', end - 1) + 1, end);
}

/** What an account's dedupe keys start with: names hold no `:`, so two accounts' keys never meet, whatever their events. */
export const accountKeyPrefix = (account: string): string => `@${account}:`;

import type { Awaitable } from '../base/maybe-async.js';
import type { RecordClient } from '../contracts/handling.js';

/** Where a receiver with `accounts` reads the account's name: the path's last segment, or a header the platform sets. */
export type AccountSource = 'path' | { header: string };

/** One merchant account's settings, as the `accounts.resolve` function gives them. */
export interface AccountSettings {
  /** The account's webhook secret, or several during its rotation (the first that matches wins). */
  secret: string | readonly string[];
  /** A client with the account's own API key (`@payhook/client`), for its handlers' `{ verify: true }`. */
  client?: RecordClient;
}

/**
 * Many merchant accounts on one endpoint (a platform): each request names its account in the
 * path or a header the platform sets, never in the body, and only that account's secrets can
 * verify it. Unknown accounts are answered as a bad signature is.
 */
export interface AccountsOptions {
  /**
   * The account's settings, from the app's database or a secret manager; `undefined` (or `null`)
   * when there is no such account. Called with names that passed the shape check (1 to 64 ASCII
   * letters, digits, `_` or `-`), at most `lookupsPerMinute` times a minute for names not cached.
   */
  resolve: (account: string) => Awaitable<AccountSettings | undefined | null>;
  /** Where the name comes from: `'path'` (default), the last segment of the request's path; or `{ header: 'X-Account' }`. */
  from?: AccountSource;
  /** Accounts whose settings are kept (default 1000), and for how long before they are looked up again (default 5 minutes). */
  cache?: { max?: number; ttlMs?: number };
  /** Longest `resolve` may take; past it the delivery gets 503 and the service retries. Default 2000, below `budgetMs`. */
  timeoutMs?: number;
  /** Lookups of names not in the cache, per minute; past it 503 (known accounts answer from the cache). Default 600. */
  lookupsPerMinute?: number;
}

const MINUTE = 60_000;

/** The `accounts` option with every default filled in and checked, once, when the receiver is created. */
export function resolveAccounts(accounts: AccountsOptions, { budgetMs, secret }: { budgetMs: number; secret?: unknown }) {
  if (secret !== undefined) {
    throw new TypeError(
      "[@payhook/core] pass `secret` or `accounts`, not both: with accounts, each account's secrets come from accounts.resolve.",
    );
  }
  if (typeof accounts !== 'object' || accounts === null || typeof accounts.resolve !== 'function') {
    throw new TypeError(
      "[@payhook/core] accounts.resolve must be a function from an account's name to its { secret }, or undefined when there is no such account.",
    );
  }
  const from = accounts.from ?? 'path';
  if (from !== 'path' && !(typeof from === 'object' && from !== null && typeof from.header === 'string' && from.header !== '')) {
    throw new TypeError(`[@payhook/core] accounts.from must be 'path' or { header: 'X-Your-Header' }; got ${JSON.stringify(from)}.`);
  }
  const positive = (name: string, value: number, whole: boolean, fallback: string) => {
    if (whole ? Number.isInteger(value) && value > 0 : Number.isFinite(value) && value > 0) return value;
    throw new RangeError(
      `[@payhook/core] accounts.${name} must be a positive ${whole ? 'whole number' : 'number'}; got ${value}. Leave it unset for ${fallback}.`,
    );
  };
  const max = positive('cache.max', accounts.cache?.max ?? 1000, true, '1000');
  const ttlMs = positive('cache.ttlMs', accounts.cache?.ttlMs ?? 5 * MINUTE, false, '300000');
  const timeoutMs = positive('timeoutMs', accounts.timeoutMs ?? Math.min(2000, budgetMs / 2), false, '2000');
  if (!(timeoutMs < budgetMs)) {
    throw new RangeError(
      `[@payhook/core] accounts.timeoutMs (${timeoutMs}) must be below budgetMs (${budgetMs}), so that a slow lookup still gets its 503 in time.`,
    );
  }
  const lookupsPerMinute = positive('lookupsPerMinute', accounts.lookupsPerMinute ?? 600, true, '600');
  return {
    resolve: accounts.resolve,
    from: from === 'path' ? from : { header: from.header.toLowerCase() },
    max,
    ttlMs,
    timeoutMs,
    lookupsPerMinute,
  } as const;
}

export type ResolvedAccounts = ReturnType<typeof resolveAccounts>;

/** The webhook secret or secrets, checked: a non-empty string, or a non-empty list of them. */
export function checkSecrets(secret: string | readonly string[] | undefined): readonly string[] {
  const list = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(list) || list.length === 0 || list.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new TypeError(
      "[@payhook/core] `secret` must be the webhook secret (a non-empty string) or a non-empty list of them; set it from your dashboard's webhook secret (or pass `accounts` for many merchant accounts).",
    );
  }
  return list;
}

import { Lru } from '../base/lru.js';
import { isPromise, type Awaitable } from '../base/maybe-async.js';
import { perMinute } from '../base/per-minute.js';
import type { Clock } from '../base/clock.js';
import type { RecordClient } from '../contracts/handling.js';
import type { RawBody, VerifyResult } from '../protocol/signature.js';
import { checkSecrets, type ResolvedAccounts, type AccountSettings } from '../settings/accounts-options.js';
import { isAccountName } from './account-name.js';

/** A known account, its secrets prepared once: what verifies its deliveries and fetches its records. */
export interface Account {
  readonly name: string;
  readonly secrets: readonly string[];
  readonly verify: (body: RawBody, header: unknown) => Awaitable<VerifyResult>;
  readonly client: RecordClient | undefined;
}

/** Why a lookup gave no account: nobody knows the name, or it could not be looked up now (503, the service retries). */
export type NoAccount = { readonly unknown: true } | { readonly unknown: false; readonly error: Error };

const UNKNOWN: NoAccount = Object.freeze({ unknown: true });

interface Kept {
  account: Account;
  /** Until then the account is used without asking `resolve` again. */
  freshUntil: number;
}

/**
 * The accounts a receiver knows, looked up through `accounts.resolve` and kept: known ones in an
 * LRU of `max` (fresh for `ttlMs`, then looked up again), unknown names in a bound of their own, so
 * that a stranger's made-up names never push out a real account. A name is looked up once at a
 * time, at most `lookupsPerMinute` times a minute for names not kept; past that, or when `resolve`
 * throws or takes longer than `timeoutMs`, a known account's last settings are used, and any other
 * name gets a 503.
 */
export function createAccountBook(
  a: ResolvedAccounts,
  clock: Clock,
  prepare: (secrets: readonly string[]) => Account['verify'],
  warn: (message: string, fields: object) => void,
) {
  const known = new Lru<string, Kept>(a.max);
  // A name nobody knows, until when it is answered as unknown without asking `resolve` again.
  const unknown = new Lru<string, number>(a.max);
  const pending = new Map<string, Promise<Account | NoAccount>>();
  const mayLookUp = perMinute(a.lookupsPerMinute, () => clock.now());

  function lookup(name: string | undefined): Awaitable<Account | NoAccount> {
    if (!isAccountName(name)) return UNKNOWN;
    const kept = known.get(name);
    if (kept !== undefined && kept.freshUntil > clock.now()) return kept.account;
    if (kept === undefined && (unknown.get(name) ?? 0) > clock.now()) return UNKNOWN;
    const running = pending.get(name);
    if (running !== undefined) return running;
    if (!mayLookUp()) return kept?.account ?? LIMITED;
    const looked = ask(name, kept).finally(() => pending.delete(name));
    pending.set(name, looked);
    return looked;
  }

  async function ask(name: string, kept: Kept | undefined): Promise<Account | NoAccount> {
    let settings: AccountSettings | undefined | null;
    try {
      settings = await withTimeout(() => a.resolve(name), a.timeoutMs, clock);
    } catch (error) {
      if (kept === undefined) return { unknown: false, error: lookupFailed(name, error) };
      // The resolver is down: a known account goes on with its last settings until it answers again.
      // It is asked again after a while, not at each delivery (which would wait out every timeout).
      kept.freshUntil = clock.now() + Math.min(a.ttlMs, RETRY_AFTER_FAILURE_MS);
      warn(`[@payhook/core] accounts.resolve failed for ${name}; its settings from the last lookup are used until it answers.`, {
        account: name,
        err: error,
      });
      return kept.account;
    }
    if (settings === undefined || settings === null) {
      known.delete(name);
      unknown.set(name, clock.now() + Math.min(a.ttlMs, UNKNOWN_TTL_MS));
      return UNKNOWN;
    }
    let account: Account;
    try {
      const secrets = checkSecrets(settings.secret);
      account = { name, secrets, verify: prepare(secrets), client: settings.client };
    } catch (error) {
      return { unknown: false, error: lookupFailed(name, error) };
    }
    unknown.delete(name);
    known.set(name, { account, freshUntil: clock.now() + a.ttlMs });
    return account;
  }

  return {
    lookup,
    /** Forget what is kept of an account (its secret was rotated, or it left the platform); the next delivery looks it up. */
    forget: (name: string) => {
      known.delete(name);
      unknown.delete(name);
    },
  };
}

export type AccountBook = ReturnType<typeof createAccountBook>;

/** How long a name `resolve` said nobody has is answered as unknown without asking again (a new account waits at most this). */
const UNKNOWN_TTL_MS = 60_000;
/** After `resolve` failed for a known account, how long its last settings are used before asking again. */
const RETRY_AFTER_FAILURE_MS = 30_000;

const LIMITED: NoAccount = Object.freeze({
  unknown: false,
  error: new Error(
    '[@payhook/core] accounts.resolve was not asked: this minute’s lookups (accounts.lookupsPerMinute) were spent on names not in the cache, a flood of made-up accounts or a cold cache. The service retries; raise lookupsPerMinute if your platform has that many accounts arriving at once.',
  ),
});

const lookupFailed = (name: string, cause: unknown) =>
  new Error(
    `[@payhook/core] accounts.resolve could not give account ${name}'s settings: it threw, took too long, or gave no { secret } (a non-empty string or list). The delivery got 503 and the service retries.`,
    { cause },
  );

/** `fn()`'s value, or a rejection once `ms` passed on the clock; a synchronous throw rejects too. */
function withTimeout<T>(fn: () => Awaitable<T>, ms: number, clock: Clock): Promise<T> {
  let value: Awaitable<T>;
  try {
    value = fn();
  } catch (error) {
    return Promise.reject(error);
  }
  if (!isPromise(value)) return Promise.resolve(value);
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(new Error(`accounts.resolve took longer than ${ms} ms`)), ms);
    value.then(
      (v) => {
        clock.clearTimeout(timer);
        resolve(v);
      },
      (error: unknown) => {
        clock.clearTimeout(timer);
        reject(error);
      },
    );
  });
}

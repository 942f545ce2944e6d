import { positiveMs, storedOutcome } from '@payhook/core/store';
import type { ClaimResult, CompleteOptions, Store, StoreRecord } from '@payhook/core/store';
import { CLAIM_SCRIPT, COMPLETE_SCRIPT, EXTEND_SCRIPT, GET_SCRIPT, RELEASE_SCRIPT } from './lua.js';

/** One of the store's Lua scripts: a name a client may register it under, and its source. */
export interface StoreScript {
  /** Unique and versioned (`payhookClaimV1`): a client that registers scripts by name keeps one per name. */
  readonly name: string;
  /** The script's Lua source. */
  readonly lua: string;
}

/** The five scripts, each over a record's two keys (`<prefix>{<key>}:rec`, `<prefix>{<key>}:lease`). */
export const STORE_SCRIPTS = {
  claim: { name: 'payhookClaimV1', lua: CLAIM_SCRIPT },
  complete: { name: 'payhookCompleteV2', lua: COMPLETE_SCRIPT },
  release: { name: 'payhookReleaseV2', lua: RELEASE_SCRIPT },
  extend: { name: 'payhookExtendV1', lua: EXTEND_SCRIPT },
  get: { name: 'payhookGetV1', lua: GET_SCRIPT },
} as const satisfies Record<string, StoreScript>;

/** A record's two keys, `<prefix>{<key>}:rec` and `<prefix>{<key>}:lease`: one hash tag, so one Cluster slot. */
export const recordKeys = (prefix: string, key: string): [string, string] => [`${prefix}{${key}}:rec`, `${prefix}{${key}}:lease`];

/**
 * How a Redis client runs one script: `EVALSHA` (or `EVAL` when the server has not seen it) with
 * `keys` and `args`, resolving to the reply as the client reads it (strings may come back as numbers).
 */
export type ScriptRunner = (script: StoreScript, keys: readonly [string, string], args: readonly (string | number)[]) => Promise<unknown>;

/** What `scriptedStore` takes: how scripts are run; the rest have defaults. */
export interface ScriptedStoreOptions {
  /** Runs the scripts; throws when the server cannot be asked. */
  run: ScriptRunner;
  /** `[@payhook/store-…]`: starts the errors about options. */
  name: string;
  /** Put before every key; must not hold `{` or `}`, since the store adds the hash tags. */
  prefix: string;
  /** How long done and released records are kept. */
  retentionMs: number;
  /** The error for a call that failed: `what` the store tried (claim, complete…) on `key`. */
  failure(what: string, key: string, cause: unknown): Error;
  /** Where complete and release publish the record's key (`<prefix>{<key>}:rec`) for waiting copies: none when unset. */
  channel?: string;
}

/**
 * The store contract over the Redis store's Lua scripts, whatever client runs them: ioredis over
 * TCP (`@payhook/store-redis`), Upstash's REST API over HTTP (`@payhook/store-upstash`), or your
 * own. One script call per claim, complete, release, extend and get; times come from the Redis
 * server's clock, and both keys of a record share a hash tag (one Cluster slot).
 */
export function scriptedStore(
  options: ScriptedStoreOptions,
): Pick<Store, 'claim' | 'complete' | 'release' | 'extend' | 'get' | 'retentionMs'> {
  const { run, name, prefix, failure } = options;
  const told = options.channel === undefined ? [] : [options.channel];
  if (/[{}]/.test(prefix)) {
    throw new TypeError(
      `${name} prefix must not contain "{" or "}" (got ${JSON.stringify(prefix)}): the store puts each key in its own hash tag. Use a prefix like "shop:payhook:".`,
    );
  }
  const retentionMs = positiveMs(options.retentionMs, 'retentionMs', name);
  const keys = (key: string) => recordKeys(prefix, key);
  const call = async (what: string, key: string, script: StoreScript, args: (string | number)[]): Promise<unknown> => {
    try {
      return await run(script, keys(key), args);
    } catch (cause) {
      throw failure(what, key, cause);
    }
  };

  return {
    retentionMs,
    async claim(key: string, leaseMs: number): Promise<ClaimResult> {
      const lease = positiveMs(leaseMs, 'leaseMs', name);
      const token = crypto.randomUUID();
      const r = (await call('claim', key, STORE_SCRIPTS.claim, [token, lease, Math.max(retentionMs, lease)])) as [
        unknown,
        unknown,
        unknown?,
      ];
      if (r[0] === 'claimed') return { status: 'claimed', token, attempt: Number(r[1]) };
      if (r[0] === 'done') return { status: 'done', outcome: storedOutcome(r[1]), completedAt: Number(r[2]) };
      return { status: 'in-progress', leaseExpiresAt: Number(r[1]) };
    },
    async complete(key: string, token: string, opts: CompleteOptions = {}): Promise<boolean> {
      const ttl = positiveMs(opts.ttlMs ?? retentionMs, 'ttlMs', name);
      return Number(await call('complete', key, STORE_SCRIPTS.complete, [token, ttl, storedOutcome(opts.outcome ?? 'ok'), ...told])) === 1;
    },
    async release(key: string, token: string): Promise<boolean> {
      return Number(await call('release', key, STORE_SCRIPTS.release, [token, retentionMs, ...told])) === 1;
    },
    async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
      const lease = positiveMs(leaseMs, 'leaseMs', name);
      return Number(await call('extend', key, STORE_SCRIPTS.extend, [token, lease])) === 1;
    },
    async get(key: string): Promise<StoreRecord | undefined> {
      const r = (await call('read', key, STORE_SCRIPTS.get, [])) as [unknown, unknown, unknown, unknown, unknown] | null;
      if (!r) return undefined;
      const [state, attempt, outcome, completedAt, leaseExpiresAt] = r;
      if (state === 'done') {
        return { state: 'done', attempt: Number(attempt), outcome: storedOutcome(outcome), completedAt: Number(completedAt) };
      }
      // A claim whose lease key is gone has lapsed: as good as released, and the next claim takes it over.
      const lease = Number(leaseExpiresAt);
      if (state === 'claimed' && lease > 0) return { state: 'claimed', attempt: Number(attempt), leaseExpiresAt: lease };
      return { state: 'released', attempt: Number(attempt) };
    },
  };
}

import { randomUUID } from 'node:crypto';
import { DEFAULT_RETENTION_MS, ledgerSettings, storeLog } from '@payhook/core/store';
import type { Store } from '@payhook/core';
import type { ClaimResult, CompleteOptions, Ledger, LedgerOptions, StoreRecord } from '@payhook/core/store';
import type { Cluster, Redis } from 'ioredis';
import { createClient, readiness, warnIfNotDurable } from './redis-client.js';
import { redisLedger } from './redis-ledger.js';
import { CLAIM_SCRIPT, COMPLETE_SCRIPT, EXTEND_SCRIPT, GET_SCRIPT, outcomeOf, RELEASE_SCRIPT } from './scripts.js';

const NAME = '[@payhook/store-redis]';

export interface RedisStoreOptions {
  /**
   * An ioredis client (or Cluster) you own; the store never closes it. For fail-fast behaviour
   * create it with `enableOfflineQueue: false`, `maxRetriesPerRequest: 0` and a `commandTimeout`,
   * and with a `socketTimeout` (ioredis 5.4+) so a connection a partition silenced is replaced
   * rather than waited on for ever.
   */
  client?: Redis | Cluster;
  /** A Redis URL (`redis://…`, `rediss://…`); the store then creates, tunes and closes its own client. */
  url?: string;
  /** Put before every key. Default `payhook:`. Must not hold `{` or `}`: the store adds the hash tags. */
  prefix?: string;
  /** How long done and released records are kept. Default 30 days (`DEFAULT_RETENTION_MS`). */
  retentionMs?: number;
  /** Longest wait for Redis, per command and for a connection being made. Default 2000 ms, under the receiver's budget. */
  commandTimeoutMs?: number;
  /**
   * On first use, ask the server (`CONFIG GET appendonly`) whether it keeps an append-only file,
   * and warn once when it does not: a restart then forgets every done record. Silent where CONFIG
   * is not allowed. Default true.
   */
  checkDurability?: boolean;
  /**
   * Keep a delivery ledger beside the claims (`store.ledger`): `true` for the defaults (bodies
   * kept, 100,000 records and 10,000 refusals, 7 days), or bounds of your own. Its keys share the hash tag `{ledger}`.
   */
  ledger?: LedgerOptions | true;
}

export interface RedisStore extends Store {
  /** The ioredis client the store uses. */
  readonly client: Redis | Cluster;
  /** Closes the client when the store created it from `url`; leaves a client you passed open. */
  close(): Promise<void>;
  /** The delivery ledger, when the store was created with a `ledger` option. */
  readonly ledger?: Ledger;
}

type ScriptFn = (rec: string, lease: string, ...args: (string | number)[]) => Promise<unknown>;
interface ScriptCommands {
  payhookClaimV1: ScriptFn;
  payhookCompleteV1: ScriptFn;
  payhookReleaseV1: ScriptFn;
  payhookExtendV1: ScriptFn;
  payhookGetV1: ScriptFn;
}

const SCRIPTS: Record<keyof ScriptCommands, string> = {
  payhookClaimV1: CLAIM_SCRIPT,
  payhookCompleteV1: COMPLETE_SCRIPT,
  payhookReleaseV1: RELEASE_SCRIPT,
  payhookExtendV1: EXTEND_SCRIPT,
  payhookGetV1: GET_SCRIPT,
};

/**
 * The store contract on Redis: one `EVALSHA` round trip per claim and per complete. A claim is a
 * `SET NX PX` lease key holding the token, beside a hash with the state and attempt count; both
 * keys share a hash tag, so the store works on Redis Cluster. Needs Redis 5 or later.
 *
 * When Redis is down every call fails within `commandTimeoutMs` (nothing waits in an offline
 * queue), so the receiver answers 503 and the service retries; ioredis reconnects on its own.
 *
 * @example
 * import { createReceiver } from '@payhook/core';
 * import { redisStore } from '@payhook/store-redis';
 *
 * const store = redisStore({ url: process.env.REDIS_URL!, prefix: 'shop:payhook:' });
 * const receiver = createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET!, store });
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  const prefix = options.prefix ?? 'payhook:';
  if (/[{}]/.test(prefix)) {
    throw new TypeError(
      `${NAME} prefix must not contain "{" or "}" (got ${JSON.stringify(prefix)}): the store puts each key in its own hash tag. Use a prefix like "shop:payhook:".`,
    );
  }
  const retentionMs = positiveMs(options.retentionMs ?? DEFAULT_RETENTION_MS, 'retentionMs');
  const timeoutMs = positiveMs(options.commandTimeoutMs ?? 2_000, 'commandTimeoutMs');
  const ledger = options.ledger ? ledgerSettings(options.ledger, NAME, 100_000) : undefined;
  const owned = !options.client;
  const log = storeLog();
  const client = options.client ?? createClient(options.url, timeoutMs, log);
  for (const [name, lua] of Object.entries(SCRIPTS)) {
    if (typeof (client as unknown as Record<string, unknown>)[name] !== 'function') {
      client.defineCommand(name, { numberOfKeys: 2, lua });
    }
  }
  const scripts = client as unknown as ScriptCommands;
  const keys = (key: string): [string, string] => [`${prefix}{${key}}:rec`, `${prefix}{${key}}:lease`];

  const ready = readiness(client, timeoutMs);

  let durabilityChecked = options.checkDurability === false;
  async function call(what: string, key: string, run: () => Promise<unknown>): Promise<unknown> {
    try {
      await ready();
      if (!durabilityChecked) {
        durabilityChecked = true;
        void warnIfNotDurable(client, log);
      }
      return await run();
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw new Error(
        `${NAME} could not ${what} "${key}" (${reason}). The receiver answers 503 so the service retries; ` +
          'check that Redis is running and reachable at the configured URL (REDIS_URL).',
        { cause },
      );
    }
  }

  return {
    client,
    retentionMs,
    useLogger: log.use,
    ...(ledger && { ledger: redisLedger(client, prefix, ledger, ready, retentionMs) }),
    async claim(key: string, leaseMs: number): Promise<ClaimResult> {
      const lease = positiveMs(leaseMs, 'leaseMs');
      const token = randomUUID();
      const r = (await call('claim', key, () => scripts.payhookClaimV1(...keys(key), token, lease, Math.max(retentionMs, lease)))) as [
        string,
        unknown,
        unknown?,
      ];
      if (r[0] === 'claimed') return { status: 'claimed', token, attempt: Number(r[1]) };
      if (r[0] === 'done') return { status: 'done', outcome: outcomeOf(r[1]), completedAt: Number(r[2]) };
      return { status: 'in-progress', leaseExpiresAt: Number(r[1]) };
    },
    async complete(key: string, token: string, opts: CompleteOptions = {}): Promise<boolean> {
      const ttl = positiveMs(opts.ttlMs ?? retentionMs, 'ttlMs');
      const r = await call('complete', key, () => scripts.payhookCompleteV1(...keys(key), token, ttl, outcomeOf(opts.outcome ?? 'ok')));
      return r === 1;
    },
    async release(key: string, token: string): Promise<boolean> {
      return (await call('release', key, () => scripts.payhookReleaseV1(...keys(key), token, retentionMs))) === 1;
    },
    async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
      const lease = positiveMs(leaseMs, 'leaseMs');
      return (await call('extend', key, () => scripts.payhookExtendV1(...keys(key), token, lease))) === 1;
    },
    async get(key: string): Promise<StoreRecord | undefined> {
      const r = (await call('read', key, () => scripts.payhookGetV1(...keys(key)))) as
        | [string, string, string | null, string | null, number]
        | null;
      if (!r) return undefined;
      const [state, attempt, outcome, completedAt, leaseExpiresAt] = r;
      if (state === 'done') {
        return { state: 'done', attempt: Number(attempt), outcome: outcomeOf(outcome), completedAt: Number(completedAt) };
      }
      // A claim whose lease key is gone has lapsed: as good as released, and the next claim takes it over.
      if (state === 'claimed' && leaseExpiresAt > 0) return { state: 'claimed', attempt: Number(attempt), leaseExpiresAt };
      return { state: 'released', attempt: Number(attempt) };
    },
    async close() {
      if (!owned || client.status === 'end') return;
      await client.quit().catch(() => client.disconnect());
    },
  };
}

function positiveMs(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`${NAME} ${name} must be a positive number of milliseconds; got ${value}.`);
  }
  return Math.ceil(value);
}

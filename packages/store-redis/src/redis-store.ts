import { DEFAULT_RETENTION_MS, ledgerSettings, positiveMs, primaryWatch, storeLog } from '@payhook/core/store';
import type { Store } from '@payhook/core';
import type { Ledger, LedgerOptions } from '@payhook/core/store';
import type { Cluster, Redis } from 'ioredis';
import { createClient, readiness, warnIfNotDurable } from './redis-client.js';
import { keyListener } from './redis-listener.js';
import { redisLedger } from './redis-ledger.js';
import {
  checkReplication,
  readInfo,
  redisIdentity,
  ReplicaWaitError,
  replicatedRun,
  replicaWait,
  type ReplicaWait,
} from './replication.js';
import { recordKeys, scriptedStore } from './scripted-store.js';

const NAME = '[@payhook/store-redis]';

/** What `redisStore` takes: an ioredis client, or a URL to make one; the rest have defaults. */
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
   * On first use, ask the server whether it keeps an append-only file (`CONFIG GET appendonly`)
   * and whether it has replicas (`INFO replication`), and warn once when a restart would forget
   * every done record, or a failover those of its last moments. Silent where Redis refuses the
   * command, and about replicas where there are none. Default true.
   */
  checkDurability?: boolean;
  /**
   * Answer only once this many replicas hold each claim, done record and longer lease (Redis
   * `WAIT`, in the same round trip), so that a failover to a replica forgets none of them. Past
   * `timeoutMs` (default 1000) a claim fails and the delivery is answered 503, so the service
   * retries; a done record is written again in the background, its event already answered.
   * Without it, a failover to an asynchronous replica loses what the replica had not received.
   */
  waitForReplicas?: ReplicaWait;
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
  const timeoutMs = positiveMs(options.commandTimeoutMs ?? 2_000, 'commandTimeoutMs', NAME);
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const prefix = options.prefix ?? 'payhook:';
  const ledger = options.ledger ? ledgerSettings(options.ledger, NAME, 100_000) : undefined;
  const wait = options.waitForReplicas && replicaWait(options.waitForReplicas);
  if (wait && !options.client && wait.timeoutMs >= timeoutMs) {
    throw new TypeError(
      `${NAME} waitForReplicas.timeoutMs (${wait.timeoutMs}) must be shorter than commandTimeoutMs (${timeoutMs}): a WAIT that runs its course would end the connection. Lower the one or raise the other.`,
    );
  }
  const log = storeLog();
  const checkDurability = options.checkDurability !== false;
  const primary = primaryWatch(`${NAME} Redis`, log);
  let inspected = false;

  // Before the client: an option refused here must not leave a connection behind.
  const channel = `${prefix}changes`;
  const scripts = scriptedStore({
    name: NAME,
    prefix,
    channel,
    retentionMs,
    async run(script, keys, args) {
      await ready();
      if (!inspected) {
        inspected = true;
        void inspect(true);
      }
      // Registered by name once per client: ioredis then sends EVALSHA, and EVAL when the server has not seen it.
      const commands = client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      if (typeof commands[script.name] !== 'function') client.defineCommand(script.name, { numberOfKeys: 2, lua: script.lua });
      return waited ? waited(script, keys, args) : commands[script.name]!(...keys, ...args);
    },
    failure(what, key, cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      const check =
        cause instanceof ReplicaWaitError
          ? 'check the replicas (INFO replication: connected_slaves, and their lag), or raise waitForReplicas.timeoutMs.'
          : 'check that Redis is running and reachable at the configured URL (REDIS_URL).';
      return new Error(`${NAME} could not ${what} "${key}" (${reason}). The receiver answers 503 so the service retries; ${check}`, {
        cause,
      });
    },
  });

  const owned = !options.client;
  const client = options.client ?? createClient(options.url, timeoutMs, log);
  const ready = readiness(client, timeoutMs);
  const waited = wait && replicatedRun(client, wait);
  // One INFO on first use (who the primary is, and, with the durability check, its replicas) and
  // after every reconnect (who the primary is now: a failover, or a DNS flip, is noticed and
  // logged). A Cluster's nodes each have their own identity; its client is left out of that.
  const inspect = async (first: boolean) => {
    if (first && checkDurability) void warnIfNotDurable(client, log);
    const fields = await readInfo(client);
    if (!fields) return;
    const identity = client.isCluster ? undefined : redisIdentity(fields);
    if (identity) primary.seen(identity);
    if (first && checkDurability) checkReplication(fields, wait, log);
  };
  client.on('ready', () => {
    if (inspected) void inspect(false);
  });
  // The old primary's last moment, for the window a switch names: when its connection closed.
  client.on('close', primary.ok);
  const listener = keyListener(client, channel, timeoutMs, log);
  return {
    ...scripts,
    client,
    useLogger: log.use,
    // The complete and release scripts publish the record's first key.
    watch: (key) => listener.watch(recordKeys(prefix, key)[0]),
    ...(ledger && { ledger: redisLedger(client, prefix, ledger, ready, scripts.retentionMs) }),
    async close() {
      await listener.close();
      if (!owned || client.status === 'end') return;
      await client.quit().catch(() => client.disconnect());
    },
  };
}

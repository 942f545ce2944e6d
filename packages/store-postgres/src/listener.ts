import { keyWatches, type StoreLog, type StoreWatch } from '@payhook/core/store';
import pg from 'pg';
import type { Pool } from 'pg';
import { hashedName } from './sql/statement-names.js';
import { NAME } from './base/store-error.js';

/** The store's channel for `table`: short and fixed, whatever the table's name (a channel holds at most 63 bytes). */
export const channelOf = (table: string): string => hashedName(table, 16);

/** The listening connection's `application_name`. */
export const LISTENER_NAME = 'payhook listener';

/** How long after losing its connection the listener tries again, while copies wait. */
const RETRY_MS = 1_000;

/**
 * The store's ear for the keys whose claims end: one connection of its own, apart from the pool
 * (a pooled connection is handed to others between queries), `LISTEN`ing on the store's channel
 * from the first watch on, where every complete and release of any process is told at its commit.
 * A copy waiting for a running key is told when it ends, and asks the store again only then.
 *
 * When the connection drops, or stays silent to a query while copies wait, every watch is woken
 * (what was told meanwhile is lost), so each copy looks once more; the listener connects again
 * while any copy waits. A watch that cannot be had (the server refuses) fails, and the copy polls
 * instead.
 *
 * @example
 * const listener = keyListener(pool, channelOf(table), 2000, log);
 * const w = await listener.watch(key);
 * await w.changed();
 */
export function keyListener(pool: Pool, channel: string, timeoutMs: number, log: StoreLog) {
  const watches = keyWatches();
  let client: pg.Client | undefined;
  let listening: Promise<void> | undefined;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  // While copies wait, the connection is asked for an answer every timeoutMs: one a partition
  // silenced never errors by itself, and the notifications it no longer brings would leave the
  // copies waiting for their budget's end.
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const beat = () => {
    heartbeat ??= setInterval(() => {
      const c = client;
      if (c === undefined || watches.size === 0 || listening === undefined) return;
      c.query({ text: 'SELECT 1', query_timeout: timeoutMs } as pg.QueryConfig).catch((error: Error) => {
        if (client === c) lost(`no answer within ${timeoutMs} ms (${error.message})`);
      });
    }, timeoutMs);
    heartbeat.unref?.();
  };

  const lost = (reason: string) => {
    if (client === undefined) return;
    const old = client;
    client = undefined;
    listening = undefined;
    old.removeAllListeners('notification');
    // Whatever it reports from now on goes nowhere rather than crash the process.
    old.on('error', () => {});
    old.end().catch(() => {});
    watches.all();
    if (closed || watches.size === 0) return;
    log.warn(
      `${NAME} lost the connection that listens for finished deliveries (${reason}); copies waiting for a running event look again, and it reconnects.`,
    );
    retry ??= setTimeout(() => {
      retry = undefined;
      if (watches.size > 0 && !closed)
        void listen().then(
          () => watches.all(),
          () => lost('reconnect failed'),
        );
    }, RETRY_MS);
    retry.unref?.();
  };

  const listen = (): Promise<void> =>
    (listening ??= (async () => {
      const c = new pg.Client({
        ...(pool as unknown as { options: pg.ClientConfig }).options,
        connectionTimeoutMillis: timeoutMs,
        keepAlive: true,
        // Named in pg_stat_activity, where its last query is the heartbeat's.
        application_name: LISTENER_NAME,
      });
      client = c;
      c.on('error', (error: Error) => lost(error.message));
      c.on('end', () => lost('the server ended it'));
      c.on('notification', (message) => {
        if (message.channel === channel && message.payload !== undefined) watches.changed(message.payload);
      });
      await c.connect();
      await c.query({ text: `LISTEN "${channel}"`, query_timeout: timeoutMs } as pg.QueryConfig);
      beat();
    })().catch((error: unknown) => {
      lost(error instanceof Error ? error.message : String(error));
      throw error;
    }));

  return {
    async watch(key: string): Promise<StoreWatch> {
      if (closed) throw new Error(`${NAME} the store is closed.`);
      await listen();
      return watches.watch(key);
    },
    async close(): Promise<void> {
      closed = true;
      if (heartbeat !== undefined) clearInterval(heartbeat);
      if (retry !== undefined) clearTimeout(retry);
      const c = client;
      client = undefined;
      listening = undefined;
      watches.all();
      if (c) {
        c.removeAllListeners('end');
        c.on('error', () => {});
        await c.end().catch(() => {});
      }
    },
  };
}

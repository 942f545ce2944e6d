import { keyWatches, within, type StoreLog, type StoreWatch } from '@payhook/core/store';
import type { Cluster, Redis } from 'ioredis';
import { readiness } from './redis-client.js';

const NAME = '[@payhook/store-redis]';

/**
 * The store's ear for the records whose claims end: a connection of its own (a subscribed
 * connection can send nothing else), made from the store's client on the first watch, subscribed
 * to `channel`, where every complete and release of any process publishes the record's key. A copy
 * waiting for a running key is told when it ends, and asks the store again only then.
 *
 * When the connection drops, or stays silent to a PING while copies wait, every watch is woken
 * (what was published meanwhile is lost), so each copy looks once more; ioredis reconnects and
 * subscribes again, and the watches are woken once more when it has. A watch that cannot be had in `timeoutMs` fails, and the copy polls instead.
 *
 * @example
 * const listener = keyListener(client, 'payhook:changes', 2000, log);
 * const w = await listener.watch('payhook:{sandbox:ref_1:payment.success}:rec');
 * await w.changed();
 */
export function keyListener(client: Redis | Cluster, channel: string, timeoutMs: number, log: StoreLog) {
  const watches = keyWatches();
  let subscriber: Redis | Cluster | undefined;
  let subscribed: Promise<void> | undefined;
  let closed = false;
  let down = false;
  // While copies wait, the connection is asked for an answer every timeoutMs: one a partition
  // silenced never errors by itself, and the messages it no longer brings would leave the copies
  // waiting for their budget's end. No answer in time: it is dropped, and ioredis connects again.
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const beat = () => {
    heartbeat ??= setInterval(() => {
      const sub = subscriber;
      if (sub === undefined || watches.size === 0 || sub.status !== 'ready') return;
      within(timeoutMs, sub.ping(), 'Redis').catch(() => {
        if (subscriber === sub) sub.disconnect(true);
      });
    }, timeoutMs);
    heartbeat.unref?.();
  };

  const subscribe = (): Promise<void> =>
    (subscribed ??= (async () => {
      const sub = (subscriber ??= made());
      await readiness(sub, timeoutMs)();
      await sub.subscribe(channel);
      beat();
    })().catch((error: unknown) => {
      subscribed = undefined;
      throw error;
    }));

  function made(): Redis | Cluster {
    const sub = (client as Redis).duplicate() as Redis | Cluster;
    sub.on('message', (from: string, key: string) => {
      if (from === channel) watches.changed(key);
    });
    sub.on('error', (error: Error) => {
      if (down || closed) return;
      down = true;
      log.warn(
        `${NAME} lost the connection that listens for finished deliveries (${error.message}); copies waiting for a running event look again, and it reconnects.`,
      );
    });
    // Messages published while it was away are lost: every waiting copy looks again, now and once back.
    sub.on('close', () => watches.all());
    sub.on('ready', () => {
      down = false;
      watches.all();
    });
    return sub;
  }

  return {
    async watch(key: string): Promise<StoreWatch> {
      if (closed) throw new Error(`${NAME} the store is closed.`);
      await subscribe();
      return watches.watch(key);
    },
    async close(): Promise<void> {
      closed = true;
      if (heartbeat !== undefined) clearInterval(heartbeat);
      watches.all();
      const sub = subscriber;
      subscriber = undefined;
      if (sub && sub.status !== 'end') await sub.quit().catch(() => sub.disconnect());
    },
  };
}

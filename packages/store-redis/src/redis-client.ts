import type { StoreLog } from '@payhook/core/store';
import { Redis } from 'ioredis';
import type { Cluster } from 'ioredis';

const NAME = '[@payhook/store-redis]';

// The store's side of the connection: the client it makes from a URL, the wait for it to be ready, the durability check.

/**
 * The wait for a connection being made, for every call of one store: fails at once when there is
 * none, so nothing sits in an offline queue. One shared wait, so concurrent calls add no listeners of their own.
 */
export function readiness(client: Redis | Cluster, timeoutMs: number): () => Promise<void> {
  let connecting: Promise<void> | undefined;
  return function ready(): Promise<void> {
    const status = client.status;
    if (status === 'ready') return Promise.resolve();
    if (status === 'end') {
      return Promise.reject(new Error(`${NAME} the Redis client was closed; create a new store (or a new client) to go on.`));
    }
    if (status === 'wait') client.connect().catch(() => {});
    else if (status !== 'connecting' && status !== 'connect') {
      return Promise.reject(new Error(`Redis is not connected (client status: ${status})`));
    }
    connecting ??= new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        connecting = undefined;
        clearTimeout(timer);
        client.off('ready', onReady);
        client.off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onReady = () => done();
      const onClose = () => done(new Error('the connection to Redis closed before it was ready'));
      const timer = setTimeout(done, timeoutMs, new Error(`no connection to Redis within ${timeoutMs} ms`));
      client.once('ready', onReady);
      client.once('close', onClose);
    });
    return connecting;
  };
}

/** The client the store creates (and closes) from a URL: tuned to fail fast, one log line per outage. */
export function createClient(url: string | undefined, timeoutMs: number, log: StoreLog): Redis {
  if (!url) {
    throw new TypeError(`${NAME} pass \`url\` (for example process.env.REDIS_URL) or \`client\` (an ioredis client) to redisStore().`);
  }
  const client = new Redis(url, {
    // Fail fast: a command never waits for a connection that may not come back...
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    // A connection a partition silenced (a NAT or balancer forgot it, a failover moved the address)
    // never errors by itself: a command timeout alone would leave every later command on it. Ended
    // when a command gets no byte back within the timeout, it is replaced by a new connection.
    socketTimeout: timeoutMs,
    // Probes keep an idle connection's NAT and balancer entries alive (and end it, on the kernel's
    // schedule, when its peer is gone).
    keepAlive: 30_000,
    // ...and a claim that timed out is not sent again later, where it would hold the key for a whole lease.
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
  let down = false;
  client.on('error', (error: Error) => {
    // One line per outage, not one per reconnect attempt; each failed delivery is reported by the receiver.
    if (down) return;
    down = true;
    log.error(`${NAME} lost Redis (${error.message}); deliveries get 503 until it is back, and the client reconnects on its own.`);
  });
  client.on('ready', () => {
    if (down) log.error(`${NAME} Redis is back.`);
    down = false;
  });
  return client;
}

/** Warn once when the server keeps no append-only file; never fails anything (managed Redis often refuses CONFIG). */
export async function warnIfNotDurable(client: Redis | Cluster, log: StoreLog): Promise<void> {
  try {
    const reply = (await client.config('GET', 'appendonly')) as string[];
    if (reply[1] !== 'no') return;
    log.warn(
      `${NAME} Redis runs without its append-only file (appendonly no): a restart or a crash forgets the done records, and copies of events that arrive afterwards run again. ` +
        'Turn it on (appendonly yes; appendfsync everysec loses at most about the last second of done records, always none), or pass checkDurability: false to silence this.',
    );
  } catch {
    // CONFIG refused or renamed: nothing to say.
  }
}

import type { HandlerContext } from '@payhook/core';
import type { Handoff, QueuedEvent } from '@payhook/core/queue';
import { Queue, type ConnectionOptions } from 'bullmq';

export const NAME = '[@payhook/queue-bullmq]';

/** What `bullmqQueue` takes: the Redis connection; the rest have defaults. */
export interface BullmqQueueOptions {
  /** Where Redis is: ioredis options or an ioredis instance, as BullMQ takes them. */
  connection: ConnectionOptions;
  /** The queue's name (no `:`). Default `payhook`; its dead letters go to `<name>-dead-letter`. */
  name?: string;
  /** Runs of a job before it goes to the dead-letter queue. Default 8. */
  attempts?: number;
  /** The first retry's delay; each next one doubles it (BullMQ's exponential backoff). Default 1000. */
  backoffMs?: number;
  /**
   * How long a completed job is kept. While it is, a retry that queues the same event again (a web
   * process that died after the enqueue and before its done record) adds nothing: the job id is
   * the event's dedupe key. Default one day, well past the service's 15 minutes of retries.
   */
  keepCompletedSeconds?: number;
  /** BullMQ's key prefix. Default BullMQ's (`bull`). */
  prefix?: string;
  /**
   * Answer only once this many replicas hold the job (Redis `WAIT` on the queue's connection after
   * the add), so a failover to a replica cannot lose an event already answered 202. Past
   * `timeoutMs` (default 1000) the enqueue fails and the service retries; the job id keeps a
   * second add of the same event from queuing it twice. Use it with the Redis store's option of
   * the same name.
   */
  waitForReplicas?: { count: number; timeoutMs?: number };
}

/** A BullMQ queue a receiver hands events to (`handoff`) and `createWorker` consumes. */
export interface PayhookBullmqQueue extends Handoff {
  /** The queue's name, as given or `payhook`. */
  readonly name: string;
  /** The BullMQ queue, for its dashboards and counts. */
  readonly queue: Queue<QueuedEvent>;
  /** Where jobs go after their last attempt, or at once for NonRetriableError: each with the error that sent it. */
  readonly deadLetters: Queue<DeadLetter>;
  /** The options given, with `attempts` and `backoffMs` filled in. */
  readonly options: Required<Pick<BullmqQueueOptions, 'attempts' | 'backoffMs'>> & BullmqQueueOptions;
  /** Closes both queues' connections (the main one and the dead letters'). */
  close(): Promise<void>;
}

/** A job in the dead-letter queue: the job as it was queued, and why it ended there. */
export interface DeadLetter extends QueuedEvent {
  /** The message of the error that sent the job here. */
  error: string;
  /** The runs it had, the last included. */
  attempts: number;
  /** When it got here, in epoch ms. */
  deadAt: number;
}

/** A queue's commands are short: no byte back within this long means the connection is gone. */
const QUEUE_SOCKET_TIMEOUT_MS = 2_000;

/**
 * The ioredis options BullMQ gets, payhook's network settings under yours (yours win). A connection
 * a partition silenced never errors by itself, and without these BullMQ would wait on it for ever:
 * `socketTimeout` (ioredis 5.4+) ends a connection that sends no byte back within that long while
 * a command waits, reconnects come at most 2 s apart (BullMQ's own back-off grows to 20 s), and
 * keepalive probes keep an idle connection's NAT and balancer entries. An ioredis instance of
 * yours is used as it is: give it these settings yourself.
 */
export function withNetworkDefaults(connection: ConnectionOptions, socketTimeoutMs: number): ConnectionOptions {
  if (typeof (connection as { duplicate?: unknown }).duplicate === 'function') return connection;
  return {
    retryStrategy: (times: number) => Math.min(times * 200, 2_000),
    keepAlive: 30_000,
    socketTimeout: socketTimeoutMs,
    ...connection,
  } as ConnectionOptions;
}

type Waiting = { wait(count: number, timeoutMs: number): Promise<number>; on(event: 'close', listener: () => void): unknown };

/** The queue's own ioredis connection: `queue.client` in BullMQ 5, its backend's `client` in 6. */
function connectionOf(queue: Queue<QueuedEvent>): Promise<Waiting> {
  const q = queue as unknown as { getBackend?: () => { client: Promise<Waiting> }; client: Promise<Waiting> };
  return q.getBackend ? q.getBackend().client : q.client;
}

/** Per queue connection: how many times it closed, and the `WAIT` the adds that just ended share. */
interface Shared {
  closes: number;
  next?: Promise<number>;
}
const shared = new WeakMap<Waiting, Shared>();
function sharedOf(client: Waiting): Shared {
  let state = shared.get(client);
  if (!state) {
    const fresh: Shared = { closes: 0 };
    client.on('close', () => void fresh.closes++);
    shared.set(client, (state = fresh));
  }
  return state;
}

/**
 * Add the job, then `WAIT` on the connection that added it: it covers every write sent on it so
 * far, the job's included. `WAIT` blocks its connection until it returns, so the adds that end
 * together share one, sent once their turn of the event loop is over. If the connection was
 * replaced in between (ioredis sends unanswered commands again after a reconnect, the WAIT alone
 * on the new connection), it confirms nothing.
 */
async function addReplicated(client: Waiting, add: () => Promise<unknown>, count: number, timeoutMs: number) {
  const state = sharedOf(client);
  const before = state.closes;
  await add();
  state.next ??= new Promise<number>((resolve, reject) =>
    setImmediate(() => {
      state.next = undefined;
      client.wait(count, timeoutMs).then(resolve, reject);
    }),
  );
  const acked = await state.next;
  if (state.closes !== before) throw new Error('the connection to Redis was replaced before the replicas confirmed the job');
  if (acked < count)
    throw new Error(`${acked} of the ${count} replica(s) waitForReplicas asks for confirmed the job within ${timeoutMs} ms`);
}

/**
 * A BullMQ job id for a dedupe key: BullMQ refuses ids with `:` (every default key has two) and
 * ids that are whole numbers, so the key is escaped, reversibly, and prefixed.
 */
export const jobIdOf = (dedupeKey: string): string => `e-${dedupeKey.replaceAll('%', '%25').replaceAll(':', '%3A')}`;

/**
 * Hand events to BullMQ on Redis. `enqueue` adds the job under the event's dedupe key as its id,
 * so a second enqueue of the same event (after a crash before the receiver's done record) finds
 * the first job and adds nothing.
 *
 * @example
 * const queue = bullmqQueue({ connection: { host: '127.0.0.1', port: 6379 } });
 * const receiver = createReceiver({ secret, store, handoff: queue }); // the web process
 * createWorker({ queue, store }).on('payment.success', markPaid).start(); // a worker process
 */
export function bullmqQueue(options: BullmqQueueOptions): PayhookBullmqQueue {
  const name = options.name ?? 'payhook';
  if (name.includes(':') || name.length === 0)
    throw new TypeError(`${NAME} name must be a non-empty queue name without ':'; got ${JSON.stringify(name)}.`);
  const attempts = options.attempts ?? 8;
  if (!(Number.isInteger(attempts) && attempts >= 1))
    throw new RangeError(`${NAME} attempts must be a whole number from 1; got ${attempts}. Leave it unset for 8.`);
  const backoffMs = options.backoffMs ?? 1_000;
  if (!(Number.isFinite(backoffMs) && backoffMs >= 0))
    throw new RangeError(`${NAME} backoffMs must be a number of milliseconds from 0; got ${backoffMs}.`);
  const keep = options.keepCompletedSeconds ?? 24 * 60 * 60;
  const wait = options.waitForReplicas;
  if (wait && !(Number.isInteger(wait.count) && wait.count >= 1 && (wait.timeoutMs ?? 1_000) > 0))
    throw new RangeError(
      `${NAME} waitForReplicas needs a whole count of replicas from 1 and a timeoutMs above 0; got ${JSON.stringify(wait)}.`,
    );
  const base = { connection: withNetworkDefaults(options.connection, QUEUE_SOCKET_TIMEOUT_MS), prefix: options.prefix };
  const queue = new Queue<QueuedEvent>(name, base);
  const deadLetters = new Queue<DeadLetter>(`${name}-dead-letter`, base);
  // Unheard, an 'error' of a Queue's connection would end the process; the enqueue's own rejection carries it.
  queue.on('error', () => {});
  deadLetters.on('error', () => {});
  const jobOptions = {
    attempts,
    backoff: { type: 'exponential', delay: backoffMs },
    removeOnComplete: { age: keep },
    removeOnFail: { age: 30 * 24 * 60 * 60 },
  } as const;
  return {
    name,
    queue,
    deadLetters,
    options: { ...options, attempts, backoffMs },
    async enqueue(job: QueuedEvent, _ctx: HandlerContext) {
      try {
        const add = () => queue.add(job.event.event, job, { ...jobOptions, jobId: jobIdOf(job.dedupeKey) });
        if (wait) await addReplicated(await connectionOf(queue), add, wait.count, wait.timeoutMs ?? 1_000);
        else await add();
      } catch (cause) {
        throw new Error(
          `${NAME} could not add ${job.dedupeKey} to queue ${name}: ${(cause as Error).message}. Check that Redis and, with waitForReplicas, its replicas are reachable; the service retries the delivery.`,
          { cause },
        );
      }
    },
    async close() {
      await Promise.all([queue.close(), deadLetters.close()]);
    },
  };
}

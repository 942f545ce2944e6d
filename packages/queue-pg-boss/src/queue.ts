import type { EventHandler, HandlerContext } from '@payhook/core';
import type { Handoff, QueuedEvent } from '@payhook/core/queue';
import { CLAIM_INSIDE, type ClaimInside } from '@payhook/core/store';
import type { PostgresStore } from '@payhook/store-postgres';
import { NAME, newPgBoss, type BossOptions, type PgBossLike } from './boss.js';

/** What `pgBossQueue` takes: the Postgres store, and pg-boss's database or a PgBoss; the rest have defaults. */
export interface PgBossQueueOptions {
  /**
   * The receiver's Postgres store, in the database pg-boss uses: the job is inserted in the
   * transaction that writes the store's done record, so the event is queued exactly once.
   */
  store: PostgresStore;
  /** Where pg-boss keeps its jobs (the same database as the store). Or pass `boss`. */
  connectionString?: string;
  /** A PgBoss of yours (pg-boss 10, 11 or 12), started or not; the queue starts it if needed and never stops it. */
  boss?: PgBossLike;
  /** The queue's name. Default `payhook`; its dead letters go to `<name>-dead-letter`. */
  name?: string;
  /** Runs of a job before it goes to the dead-letter queue. Default 8. */
  attempts?: number;
  /**
   * The first retry's delay; later ones double, with jitter (pg-boss's retryBackoff). pg-boss counts
   * whole seconds, at least 1: default 1000, and anything below rounds up to 1 s.
   */
  backoffMs?: number;
  /**
   * How long a job may run before pg-boss fails it and retries it: also how long the job of a
   * worker that died waits before it runs again. Default 300. Keep it above your slowest handler
   * and above twice the worker's `leaseMs` (a job waits that long for a claim another run holds).
   */
  expireInSeconds?: number;
  /** pg-boss's own settings when the queue creates it (e.g. `schema`, `max`, `maintenanceIntervalSeconds`). */
  bossOptions?: BossOptions & { connectionString?: never; db?: never };
}

/** A pg-boss queue a receiver hands events to (`handoff`) and `createWorker` consumes. */
export interface PayhookPgBossQueue extends Handoff {
  /** The queue's name, as given or `payhook`. */
  readonly name: string;
  /** The dead-letter queue's name: `<name>-dead-letter`. */
  readonly deadLetterName: string;
  /** Its PgBoss, typed by the calls payhook makes: cast it to your pg-boss's `PgBoss` for the rest. */
  readonly boss: PgBossLike;
  /** Runs of a job before it goes to the dead letters, as given or 8. */
  readonly attempts: number;
  /** Start pg-boss (idempotent) and create the queues; `enqueue` and workers call it themselves. */
  ready(): Promise<PgBossLike>;
  /** Stops pg-boss when the queue created it. */
  close(): Promise<void>;
}

/** A job in the dead-letter queue: the job as it was queued, and why it ended there. */
export interface DeadLetter extends QueuedEvent {
  /** The message of the error that sent the job here; missing when pg-boss moved it (a job that expired on its last attempt). */
  error?: string;
  /** The runs it had, the last included; missing when pg-boss moved it. */
  attempts?: number;
  /** When it got here, in epoch ms; missing when pg-boss moved it. */
  deadAt?: number;
}

/**
 * Hand events to pg-boss on PostgreSQL. `enqueue` sends the job inside the transaction of the
 * store's done record, fenced on the delivery's claim: both commit, or neither does.
 *
 * @example
 * const store = postgresStore({ connectionString });
 * const queue = pgBossQueue({ store, connectionString });
 * const receiver = createReceiver({ secret, store, handoff: queue }); // the web process
 * createWorker({ queue, store }).on('payment.success', markPaid).start(); // a worker process
 */
export function pgBossQueue(options: PgBossQueueOptions): PayhookPgBossQueue {
  const { store } = options;
  if (!store || typeof store.transactional !== 'function') {
    throw new TypeError(
      `${NAME} pgBossQueue needs the receiver's Postgres store: pgBossQueue({ store: postgresStore({ connectionString }), connectionString }).`,
    );
  }
  if (!options.boss && !options.connectionString)
    throw new TypeError(`${NAME} pass connectionString (the store's database) or a PgBoss as boss.`);
  const name = options.name ?? 'payhook';
  const deadLetterName = `${name}-dead-letter`;
  const attempts = options.attempts ?? 8;
  if (!(Number.isInteger(attempts) && attempts >= 1))
    throw new RangeError(`${NAME} attempts must be a whole number from 1; got ${attempts}. Leave it unset for 8.`);
  const backoffMs = options.backoffMs ?? 1_000;
  if (!(Number.isFinite(backoffMs) && backoffMs >= 0))
    throw new RangeError(`${NAME} backoffMs must be a number of milliseconds from 0; got ${backoffMs}.`);
  const expireInSeconds = options.expireInSeconds ?? 300;
  const owned = !options.boss;
  const boss =
    options.boss ?? newPgBoss({ schedule: false, ...NETWORK_DEFAULTS, ...options.bossOptions, connectionString: options.connectionString });
  // An unheard 'error' would end the process; pg-boss retries its own maintenance.
  if (boss.listenerCount('error') === 0) boss.on('error', () => {});
  const retry = { retryLimit: attempts - 1, retryDelay: Math.ceil(backoffMs / 1000), retryBackoff: true, expireInSeconds };

  let started: Promise<PgBossLike> | undefined;
  const ready = () =>
    (started ??= (async () => {
      await boss.start();
      await deadlockRetried(() => boss.createQueue(deadLetterName));
      // Jobs a worker never finished (killed on their last attempt) still reach the dead letters.
      await deadlockRetried(() => boss.createQueue(name, { ...retry, deadLetter: deadLetterName }));
      return boss;
    })().catch((error: unknown) => {
      started = undefined;
      throw new Error(
        `${NAME} could not start pg-boss or create queue ${name}: ${(error as Error).message}. Check the connection string and the database's grants.`,
        { cause: error },
      );
    }));

  // The job and the done record in one transaction, on the store's client, fenced on the claim
  // token. pg-boss's insert is named as the store's statements are: planning it was most of its cost.
  // With claim 'inside' the receiver has the claim taken in that transaction too: its answer waits
  // on one commit, and a copy of the event waits on the row for the milliseconds of the insert.
  const sendInTransaction = store.transactional(
    async (_event, ctx, client) => {
      const job = (ctx as HandlerContext & { [JOB]: QueuedEvent })[JOB];
      await boss.send(name, job, {
        ...retry,
        db: { executeSql: (text: string, values?: unknown[]) => client.query(store.statement(text, values)) },
      });
    },
    { claim: 'inside' },
  ) as EventHandler & { [CLAIM_INSIDE]: ClaimInside };

  return {
    name,
    deadLetterName,
    boss,
    attempts,
    ready,
    async enqueue(job, ctx) {
      await ready();
      await sendInTransaction(job.event, { ...ctx, [JOB]: job } as HandlerContext);
    },
    async enqueueClaiming(job, ctx, leaseMs, claimed) {
      await ready();
      return sendInTransaction[CLAIM_INSIDE](job.event, { ...ctx, [JOB]: job } as Parameters<ClaimInside>[1], leaseMs, claimed);
    },
    async close() {
      // pg-boss's stop() is a no-op when it never started. It waits for its own work by default
      // (10 and 11 take `wait`, which 12 dropped: it always waits).
      if (owned) await boss.stop({ graceful: true, close: true });
    },
  };
}

const JOB = Symbol('payhook.queued-job');

/**
 * pg settings under the `bossOptions` of yours (yours win) for the pool pg-boss opens. A connection a
 * partition silenced never errors by itself, and pg-boss's fetch on it would wait for ever, the
 * worker with it: no answer to a query within 15 s ends it, and the pool connects anew. TCP
 * keepalive keeps an idle connection's NAT and balancer entries.
 */
const NETWORK_DEFAULTS: BossOptions = { query_timeout: 15_000, keepAlive: true };

/**
 * pg-boss 10's createQueue creates a partition table (11 and 12 do so only for `partition: true`,
 * which payhook leaves unset); processes that create the same new queue at once (a first deploy
 * starting the web process and the workers together) can deadlock in Postgres (40P01), which
 * aborts all but one. The queue exists after the winner: try again.
 */
async function deadlockRetried(create: () => Promise<void>): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      return await create();
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || tries >= 8) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * tries + Math.random() * 50));
    }
  }
}

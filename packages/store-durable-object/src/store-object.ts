import { type Claims, claimsOver, type Connection } from '@payhook/store-sqlite/sql';
import { NAME, type StoreCall } from './protocol.js';

/** The part of a Durable Object's SQL storage the store uses (`ctx.storage.sql`). */
interface SqlStorage {
  exec(query: string, ...bindings: unknown[]): { toArray(): unknown[] };
}

/** The part of a Durable Object's state the store uses. */
export interface StoreObjectState {
  /** `ctx.storage`: its SQL database (a class under `new_sqlite_classes` has one), transactions and alarm. */
  storage: {
    sql?: SqlStorage;
    /** Runs `fn` in one transaction of the object's storage, and returns what it returns. */
    transactionSync<T>(fn: () => T): T;
    /** When the object's alarm is set to go off, in epoch ms; null when none is. */
    getAlarm(): Promise<number | null>;
    /** Sets the object's alarm, in epoch ms: its `alarm()` runs then. */
    setAlarm(scheduledTime: number): Promise<void>;
  };
}

const HOUR = 60 * 60 * 1000;
const PURGE_AT_ONCE = 1_000;

/** A Durable Object's SQL storage as the connection the SQLite store's claims run on. */
const connectionOver = (sql: SqlStorage): Connection => ({
  exec: (query) => sql.exec(query).toArray(),
  prepare: (query) => ({
    run: (...params) => ({ changes: sql.exec(query, ...params).toArray().length }),
    get: (...params) => sql.exec(query, ...params).toArray()[0],
    all: (...params) => sql.exec(query, ...params).toArray(),
  }),
  close: () => undefined,
});

/**
 * The Durable Object behind `durableObjectStore`: one per shard of the dedupe keys, each holding its
 * keys' claims and done records in its own SQLite database, with the same SQL as
 * `@payhook/store-sqlite`. A Durable Object runs one request at a time and every write is durable
 * before its answer leaves, so a claim is decided once, on one machine, for every isolate of the
 * Worker. An alarm deletes what is past its retention, hourly.
 *
 * Export it from your Worker, bind it, and declare it with SQLite storage (wrangler.toml):
 *
 * @example
 * // worker.ts
 * export { PayhookStoreObject } from '@payhook/store-durable-object';
 *
 * // wrangler.toml
 * // [[durable_objects.bindings]]
 * // name = "PAYHOOK_STORE"
 * // class_name = "PayhookStoreObject"
 * // [[migrations]]
 * // tag = "payhook-v1"
 * // new_sqlite_classes = ["PayhookStoreObject"]
 */
export class PayhookStoreObject {
  readonly #state: StoreObjectState;
  readonly #claims: Claims;
  #alarmSet = false;

  constructor(state: StoreObjectState, _env?: unknown) {
    const { sql } = state.storage;
    if (!sql) {
      throw new Error(
        `${NAME} PayhookStoreObject needs SQLite storage: declare it under new_sqlite_classes (not new_classes) in a migration of your wrangler config.`,
      );
    }
    this.#state = state;
    this.#claims = claimsOver(connectionOver(sql), {
      table: 'payhook_claims',
      now: Date.now,
      transaction: (fn) => state.storage.transactionSync(fn),
    });
  }

  /** Answers one store call of `durableObjectStore` (a JSON body) with its result; 400 for a body that is not one, 500 with the message for a call that threw. */
  async fetch(request: Request): Promise<Response> {
    let call: StoreCall;
    try {
      call = (await request.json()) as StoreCall;
    } catch {
      return Response.json({ error: 'the body must be a store call, as JSON' }, { status: 400 });
    }
    try {
      const result = this.#run(call);
      if (!this.#alarmSet && call.op !== 'get') await this.#scheduleAlarm();
      return Response.json({ result: result ?? null });
    } catch (error) {
      return Response.json({ error: error instanceof Error ? error.message : String(error) }, { status: 500 });
    }
  }

  /** Deletes what is past its retention, then comes back in an hour (sooner while a backlog is left). */
  async alarm(): Promise<void> {
    const purged = this.#claims.purge(PURGE_AT_ONCE);
    await this.#state.storage.setAlarm(Date.now() + (purged === PURGE_AT_ONCE ? 1_000 : HOUR));
  }

  #run(call: StoreCall): unknown {
    const c = this.#claims;
    switch (call.op) {
      case 'claim':
        return c.claim(call.key, call.leaseMs, call.retentionMs);
      case 'complete':
        return c.complete(call.key, call.token, call.outcome, call.ttlMs);
      case 'release':
        return c.release(call.key, call.token, call.retentionMs);
      case 'extend':
        return c.extend(call.key, call.token, call.leaseMs);
      case 'get':
        return c.get(call.key);
      default:
        throw new Error(`unknown store operation ${JSON.stringify((call as { op?: unknown }).op)}`);
    }
  }

  async #scheduleAlarm(): Promise<void> {
    this.#alarmSet = true;
    if ((await this.#state.storage.getAlarm()) === null) await this.#state.storage.setAlarm(Date.now() + HOUR);
  }
}

// pg-boss 10 and 11 are CommonJS: the module is the PgBoss class. pg-boss 12 is ESM only and exports
// the class by name, with no default export. One namespace import reads both, from payhook's ESM
// build and from its CommonJS one (Node 22.12 and later require() pg-boss 12's ESM).
import * as pgBoss from 'pg-boss';

export const NAME = '[@payhook/queue-pg-boss]';

/** A job as pg-boss's `fetch(name, { includeMetadata: true })` returns it: the fields payhook reads. */
export interface BossJob<T = unknown> {
  /** pg-boss's id of the job. */
  id: string;
  /** The job's payload, as sent. */
  data: T;
  /** Runs before this one: 0 on the first. */
  retryCount: number;
  /** Retries allowed after the first run. */
  retryLimit: number;
}

/**
 * The calls payhook makes on a PgBoss, written the same in pg-boss 10, 11 and 12, so a PgBoss of
 * any of them fits. Typed here rather than imported: pg-boss 12's types have no default export and
 * no `PgBoss` namespace, so a type taken from one major does not resolve with another installed.
 */
export interface PgBossLike {
  /** Starts pg-boss (connects and, on first use, creates its schema). */
  start(): Promise<unknown>;
  /** Stops pg-boss; `graceful` waits for running work, `close` ends its pool. */
  stop(options?: { graceful?: boolean; close?: boolean; timeout?: number }): Promise<void>;
  /** Creates a queue; its options set retries, backoff, expiry and the dead-letter queue. */
  createQueue(name: string, options?: object): Promise<void>;
  /** Sends a job to a queue; resolves to its id, or null when pg-boss kept none. */
  send(name: string, data: object, options?: object): Promise<string | null>;
  /** Takes up to `batchSize` jobs from a queue, with their retry counts. */
  fetch<T>(name: string, options: { batchSize: number; includeMetadata: true }): Promise<BossJob<T>[]>;
  /** Marks a fetched job done, with data to keep on it. */
  complete(name: string, id: string, data?: object): Promise<unknown>;
  /** Marks a fetched job failed, with data to keep on it: pg-boss retries it or dead-letters it. */
  fail(name: string, id: string, data?: object): Promise<unknown>;
  /** Listens to pg-boss's errors (its maintenance's, its pool's). */
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** How many listeners pg-boss's errors have. */
  listenerCount(event: 'error'): number;
}

/**
 * pg-boss's constructor options (those of the version you installed): `schema`, `max`,
 * `maintenanceIntervalSeconds`, `schedule`, and pg's pool settings, which pg-boss passes on.
 */
export interface BossOptions {
  /** The Postgres schema pg-boss keeps its tables in. pg-boss's default: `pgboss`. */
  schema?: string;
  /** The most connections pg-boss's pool opens. */
  max?: number;
  /** Whether pg-boss runs its cron scheduler; the queue turns it off when it creates the PgBoss. */
  schedule?: boolean;
  /** How often pg-boss's maintenance runs, in seconds. */
  maintenanceIntervalSeconds?: number;
  [option: string]: unknown;
}

type PgBossClass = new (options: BossOptions) => PgBossLike;

/** A new PgBoss from whichever pg-boss is installed. */
export function newPgBoss(options: BossOptions): PgBossLike {
  const exported = pgBoss as unknown as { PgBoss?: unknown; default?: unknown };
  // 12: `PgBoss`. 10 and 11: the module itself, which ESM calls `default` (and so does esbuild's
  // CommonJS interop, which there calls 12's whole namespace `default`: hence `PgBoss` first).
  const PgBoss = [exported.PgBoss, exported.default].find((candidate) => typeof candidate === 'function') as PgBossClass | undefined;
  if (!PgBoss) {
    throw new Error(
      `${NAME} the installed pg-boss exports no PgBoss class. Install a version the peer range names: npm install pg-boss@12 (Node 22.12 or newer) or pg-boss@10 (Node 20).`,
    );
  }
  return new PgBoss(options);
}

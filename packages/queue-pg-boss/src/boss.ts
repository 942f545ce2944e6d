// pg-boss 10 and 11 are CommonJS: the module is the PgBoss class. pg-boss 12 is ESM only and exports
// the class by name, with no default export. One namespace import reads both, from payhook's ESM
// build and from its CommonJS one (Node 22.12 and later require() pg-boss 12's ESM).
import * as pgBoss from 'pg-boss';

export const NAME = '[@payhook/queue-pg-boss]';

/** A job as pg-boss's `fetch(name, { includeMetadata: true })` returns it: the fields payhook reads. */
export interface BossJob<T = unknown> {
  id: string;
  data: T;
  /** Runs before this one: 0 on the first. */
  retryCount: number;
  retryLimit: number;
}

/**
 * The calls payhook makes on a PgBoss, written the same in pg-boss 10, 11 and 12, so a PgBoss of
 * any of them fits. Typed here rather than imported: pg-boss 12's types have no default export and
 * no `PgBoss` namespace, so a type taken from one major does not resolve with another installed.
 */
export interface PgBossLike {
  start(): Promise<unknown>;
  stop(options?: { graceful?: boolean; close?: boolean; timeout?: number }): Promise<void>;
  createQueue(name: string, options?: object): Promise<void>;
  send(name: string, data: object, options?: object): Promise<string | null>;
  fetch<T>(name: string, options: { batchSize: number; includeMetadata: true }): Promise<BossJob<T>[]>;
  complete(name: string, id: string, data?: object): Promise<unknown>;
  fail(name: string, id: string, data?: object): Promise<unknown>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  listenerCount(event: 'error'): number;
}

/**
 * pg-boss's constructor options (those of the version you installed): `schema`, `max`,
 * `maintenanceIntervalSeconds`, `schedule`, and pg's pool settings, which pg-boss passes on.
 */
export interface BossOptions {
  schema?: string;
  max?: number;
  schedule?: boolean;
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

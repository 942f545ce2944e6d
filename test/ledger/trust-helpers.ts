import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { LedgerEntry } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import { Redis } from 'ioredis';
import pg from 'pg';

const root = fileURLToPath(new URL('../..', import.meta.url));
const BIN = 'packages/core/bin/payhook.mjs';

/** The `payhook` command as a merchant runs it, in its own process, on `app` (test/ledger/apps/trust-app.ts); its exit code and output. */
export async function payhook(args: string[], env: Record<string, string>, app = 'test/ledger/apps/trust-app.ts') {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', BIN, ...args, '--app', app], {
      cwd: root,
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A ledger store of each kind, and a way to write a record straight into its keys or table, past the receiver. */
export interface LedgerKind {
  kind: 'redis' | 'postgres';
  url: string | undefined;
  open(name: string): ReturnType<typeof redisStore> | ReturnType<typeof postgresStore>;
  /** Write `entry` as the store lays records out (store-redis ledger-scripts.ts, store-postgres ledger-schema.ts). */
  forge(name: string, entry: LedgerEntry): Promise<void>;
  drop(name: string): Promise<void>;
}

export function ledgerKinds(redisUrl: string | undefined, pgUrl: string | undefined): LedgerKind[] {
  const withRedis = async <T>(fn: (r: Redis) => Promise<T>) => {
    const r = new Redis(redisUrl!);
    try {
      return await fn(r);
    } finally {
      r.disconnect();
    }
  };
  const withPg = async <T>(fn: (c: pg.Client) => Promise<T>) => {
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  return [
    {
      kind: 'redis',
      url: redisUrl,
      open: (name) => redisStore({ url: redisUrl!, prefix: `${name}:`, ledger: true, checkDurability: false }),
      forge: (name, entry) =>
        withRedis(async (r) => {
          const base = `${name}:{ledger}:`;
          const { late, deadLetter, ...rest } = entry;
          const k = [
            `outcome:${entry.outcome}`,
            ...(entry.reference ? [`ref:${entry.reference}`] : []),
            ...(entry.event ? [`event:${entry.event}`] : []),
          ];
          const value = [{ k }, rest, late, deadLetter].map((part) => (part === undefined ? '' : JSON.stringify(part))).join('\n');
          const open = deadLetter !== undefined && deadLetter.retriedBy === undefined;
          const multi = r.multi().set(`${base}e:${entry.id}`, value).zadd(`${base}all`, entry.receivedAt, entry.id);
          multi.zadd(`${base}${open ? 'dead' : 'live'}`, entry.receivedAt, entry.id);
          if (deadLetter) multi.zadd(`${base}dead-all`, entry.receivedAt, entry.id);
          for (const key of k) multi.zadd(base + key, entry.receivedAt, entry.id);
          await multi.exec();
        }),
      drop: (name) =>
        withRedis(async (r) => {
          const keys = await r.keys(`${name}:*`);
          if (keys.length > 0) await r.del(...keys);
        }),
    },
    {
      kind: 'postgres',
      url: pgUrl,
      open: (name) => postgresStore({ connectionString: pgUrl!, table: name, ledger: true }),
      forge: (name, entry) =>
        withPg(async (c) => void (await c.query(`insert into "${name}_ledger" (entry) values ($1::jsonb)`, [JSON.stringify(entry)]))),
      drop: (name) => withPg(async (c) => void (await c.query(`drop table if exists "${name}"; drop table if exists "${name}_ledger"`))),
    },
  ];
}

let n = 0;
/** An id as the ledger makes them: time in base 36, a counter, a part of this writer's own. */
export const forgedId = (at: number) => `${at.toString(36).padStart(11, '0')}-${(n++).toString(36).padStart(4, '0')}-forged00`;

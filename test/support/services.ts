import pg from 'pg';
import { Redis } from 'ioredis';
import { warnSkipped } from './run/skipped.js';

/** The Redis the store tests use. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The Postgres database the store tests use. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const required = process.env.PAYHOOK_REQUIRE_SERVICES === '1';

function unavailable(service: string, url: string, error: unknown, start: string): undefined {
  const reason = error instanceof Error ? error.message : String(error);
  const message =
    `${service} is not reachable at ${url} (${reason}). Start it (${start}) or point ` +
    `${service === 'Redis' ? 'REDIS_URL' : 'DATABASE_URL'} at one.`;
  if (required) throw new Error(`PAYHOOK_REQUIRE_SERVICES=1 and ${message}`);
  warnSkipped(service === 'Redis' ? 'Redis' : 'PostgreSQL', `${service} store tests`, message);
  return undefined;
}

/**
 * The Redis URL when Redis answers PING, else undefined after a loud warning; throws instead
 * when PAYHOOK_REQUIRE_SERVICES=1. Use as `describe.skipIf(!(await requireRedis()))`.
 */
export async function requireRedis(): Promise<string | undefined> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1_000, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  let cause: unknown;
  client.on('error', (e) => (cause ??= e));
  try {
    await client.connect();
    await client.ping();
    return REDIS_URL;
  } catch (error) {
    return unavailable(
      'Redis',
      REDIS_URL,
      cause ?? error,
      'redis-server --daemonize yes --port 6379 --appendonly yes --appendfsync everysec',
    );
  } finally {
    client.disconnect();
  }
}

/** The Postgres URL when it answers `select 1`, else undefined after a loud warning; throws when PAYHOOK_REQUIRE_SERVICES=1. */
export async function requirePostgres(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return DATABASE_URL;
  } catch (error) {
    return unavailable('Postgres', DATABASE_URL, error, 'pg_ctlcluster <version> main start');
  } finally {
    await client.end().catch(() => {});
  }
}

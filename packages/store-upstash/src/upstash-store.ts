import { DEFAULT_RETENTION_MS, positiveMs, within } from '@payhook/core/store';
import type { Store } from '@payhook/core/store';
import { scriptedStore, type StoreScript } from '@payhook/store-redis/scripts';
import { Redis } from '@upstash/redis';

const NAME = '[@payhook/store-upstash]';

/** What `upstashStore` takes: the database's REST URL and token, or a client of your own; the rest have defaults. */
export interface UpstashStoreOptions {
  /**
   * The database's REST URL (`https://….upstash.io`, Upstash's `UPSTASH_REDIS_REST_URL`), with
   * `token`: the store then makes its own client, tuned to fail within `timeoutMs`.
   */
  url?: string;
  /** The database's REST token (`UPSTASH_REDIS_REST_TOKEN`); not the read-only one, since claims write. */
  token?: string;
  /**
   * An `@upstash/redis` client you made (`Redis.fromEnv()`, say), instead of `url` and `token`.
   * Its own retries then add to the time a delivery waits when Upstash is unreachable: make it
   * with `retry: false` so the receiver answers 503 within its budget.
   */
  client?: Redis;
  /** Put before every key. Default `payhook:`. Must not hold `{` or `}`: the store adds the hash tags. */
  prefix?: string;
  /** How long done and released records are kept. Default 30 days (`DEFAULT_RETENTION_MS`). */
  retentionMs?: number;
  /** Longest wait for one answer from Upstash. Default 2000 ms, under the receiver's budget. */
  timeoutMs?: number;
}

export interface UpstashStore extends Store {
  /** The `@upstash/redis` client the store uses. */
  readonly client: Redis;
}

/**
 * The store contract over Upstash Redis's REST API, for platforms with `fetch` and no TCP:
 * Vercel, Netlify, Deno Deploy, Cloudflare Workers, Lambda. It runs the Redis store's own Lua
 * scripts (`@payhook/store-redis/scripts`), so claims, leases, fencing and retention behave
 * exactly as there: one HTTP request per claim and one per complete, times from the server's
 * clock. When Upstash cannot be reached, each call fails within `timeoutMs` and the receiver
 * answers 503, so the service retries.
 *
 * @example
 * import { createReceiver } from '@payhook/core';
 * import { upstashStore } from '@payhook/store-upstash';
 *
 * const store = upstashStore({ url: process.env.UPSTASH_REDIS_REST_URL!, token: process.env.UPSTASH_REDIS_REST_TOKEN! });
 * const receiver = createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET!, store });
 */
export function upstashStore(options: UpstashStoreOptions): UpstashStore {
  const timeoutMs = positiveMs(options.timeoutMs ?? 2_000, 'timeoutMs', NAME);
  const scripts = scriptedStore({
    name: NAME,
    prefix: options.prefix ?? 'payhook:',
    retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
    run: (script, keys, args) => within(timeoutMs, evalScript(client, script, [...keys], [...args]), 'Upstash'),
    failure(what, key, cause) {
      const reason = brief(cause);
      return new Error(
        `${NAME} could not ${what} "${key}" (${reason}). The receiver answers 503 so the service retries; ${fixFor(reason)}`,
        {
          cause,
        },
      );
    },
  });
  const client =
    options.client !== undefined && options.url === undefined && options.token === undefined ? options.client : ownClient(options);
  return { ...scripts, client };
}

/** The client the store makes: no retries of its own (the service retries), no telemetry headers, replies as they are. */
function ownClient({ url, token, client }: UpstashStoreOptions): Redis {
  if (client !== undefined && (url !== undefined || token !== undefined)) {
    throw new TypeError(`${NAME} pass either \`client\` or \`url\` and \`token\` to upstashStore(), not both.`);
  }
  if (url === undefined && token === undefined) {
    throw new TypeError(
      `${NAME} pass \`url\` and \`token\` (the database's REST URL and token, UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN) or \`client\` (an @upstash/redis Redis) to upstashStore().`,
    );
  }
  const protocol = protocolOf(url);
  if (protocol !== 'https:' && protocol !== 'http:') {
    const hint = protocol?.startsWith('redis') ? ' That is the TCP URL, for @payhook/store-redis:' : '';
    throw new TypeError(
      `${NAME} url must be the database's REST URL, https://<name>.upstash.io (UPSTASH_REDIS_REST_URL); got ${JSON.stringify(url ?? null)}.${hint} the REST URL is on the database's page in the Upstash console.`,
    );
  }
  if (typeof token !== 'string' || token.trim() === '') {
    throw new TypeError(
      `${NAME} token must be the database's REST token (UPSTASH_REDIS_REST_TOKEN); got ${token === '' ? 'an empty string' : 'none'}.`,
    );
  }
  return new Redis({ url, token, retry: false, enableTelemetry: false, automaticDeserialization: false });
}

const protocolOf = (url: unknown): string | undefined => {
  try {
    return new URL(String(url)).protocol;
  } catch {
    return undefined;
  }
};

// SHA-1 of each script, for EVALSHA: the server keeps scripts by it.
const shas = new Map<string, Promise<string>>();
const sha1 = (lua: string): Promise<string> => {
  let sha = shas.get(lua);
  if (!sha) {
    sha = crypto.subtle
      .digest('SHA-1', new TextEncoder().encode(lua))
      .then((digest) => Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join(''));
    shas.set(lua, sha);
  }
  return sha;
};

/** EVALSHA, and EVAL when the server does not have the script yet (a new database, a flush, a failover). */
async function evalScript(client: Redis, script: StoreScript, keys: string[], args: (string | number)[]): Promise<unknown> {
  const sha = await sha1(script.lua);
  try {
    return await client.evalsha(sha, keys, args);
  } catch (error) {
    if (!/NOSCRIPT/i.test(error instanceof Error ? error.message : String(error))) throw error;
    return client.eval(script.lua, keys, args);
  }
}

/** The error's first line, without the command @upstash/redis appends (the whole script and its keys). */
function brief(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  return message.split(', command was:')[0]!.split('\n')[0]!.slice(0, 200);
}

/** What to do about an error, by what Upstash said. */
function fixFor(reason: string): string {
  if (/NOPERM/i.test(reason)) return "the token is read-only: pass the database's standard REST token (UPSTASH_REDIS_REST_TOKEN).";
  if (/unauthori[sz]ed|WRONGPASS|invalid.*(token|password)/i.test(reason)) {
    return "Upstash refused the token: pass the database's REST token (UPSTASH_REDIS_REST_TOKEN), not its password.";
  }
  return 'check that the REST URL (UPSTASH_REDIS_REST_URL) is right and that the database is reachable.';
}

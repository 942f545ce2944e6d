import type { Log } from '../base/logger.js';
import { MEMORY_STORE, MEMORY_STORE_REGISTRY } from '../base/shared-keys.js';
import type { Store } from './store-contract.js';

// When a receiver or a queue worker is created with a memory store where that store cannot
// deduplicate, one warning per process and cause says so; and when a serverless platform may
// freeze work answered 202, the first such answer says so. Tiny on purpose: it is in every Worker
// bundle of core (scripts/check-size.mjs).

/**
 * This copy of core. Each evaluation of this module makes a new one: a second bundled copy in
 * the same process (Next's App Router and Pages Router), or a `next dev` reload.
 */
const THIS_COPY = {};

/** What a memory store carries under `MEMORY_STORE`. */
interface Mark {
  copy: object;
  warn: boolean;
}

/** Under `MEMORY_STORE_REGISTRY`: the copies whose memory stores receivers (or workers) use, and the causes already warned of. */
interface Registry {
  copies: Record<string, object[]>;
  warned: string[];
}

export type MemoryStoreUser = 'receiver' | 'worker';

/** The process's registry, made by whichever copy of core needs it first. */
const registryOf = (g: { [MEMORY_STORE_REGISTRY]?: Registry }): Registry => (g[MEMORY_STORE_REGISTRY] ??= { copies: {}, warned: [] });

/** True the first time any copy of core asks for `cause` in this process: each cause is warned of once. */
function firstTime(registry: Registry, cause: string): boolean {
  if (registry.warned.includes(cause)) return false;
  registry.warned.push(cause);
  return true;
}

/** Called by memoryStore(): marks the store as this copy's. */
export function markMemoryStore(store: Store, warn: boolean): void {
  Object.defineProperty(store, MEMORY_STORE, { value: { copy: THIS_COPY, warn } satisfies Mark });
}

const SHARED = 'a shared store: redisStore from @payhook/store-redis or postgresStore from @payhook/store-postgres';

/** Platforms whose instances come and go, by the variable they set. Cloud Functions (gen 2) sets both of Google's. */
const SERVERLESS_ENV = [
  ['VERCEL', 'Vercel'],
  ['NETLIFY', 'Netlify'],
  ['FUNCTION_TARGET', 'Google Cloud Functions'],
  ['K_SERVICE', 'Google Cloud Run'],
  ['AWS_LAMBDA_FUNCTION_NAME', 'AWS Lambda'],
] as const;

type Env = Record<string, string | undefined>;
interface Globals {
  process?: { env?: Env };
  Deno?: { permissions?: { querySync?(descriptor: { name: 'env' }): { state: string } } };
  navigator?: { userAgent?: string };
  EdgeRuntime?: unknown;
}

/** The process's environment, or none: Workers have no `process`, and Deno asks for (or throws without) env access. */
function readEnv(g: Globals): Env {
  try {
    if (g.Deno && g.Deno.permissions?.querySync?.({ name: 'env' }).state !== 'granted') return {};
    return g.process?.env ?? {};
  } catch {
    return {};
  }
}

/** The platform whose instances each keep their own memory, and what to do there; undefined on a long-lived process. */
function serverless(g: Globals, env: Env): [platform: string, advice: string] | undefined {
  if (g.navigator?.userAgent === 'Cloudflare-Workers') {
    return [
      'Cloudflare Workers',
      'Use durableObjectStore from @payhook/store-durable-object (Durable Objects decide each claim for every isolate), or upstashStore from @payhook/store-upstash.',
    ];
  }
  if (g.EdgeRuntime !== undefined) {
    return [
      'the Edge runtime',
      `Use upstashStore from @payhook/store-upstash (HTTP only), or receive in a Node.js route (export const runtime = 'nodejs') and use ${SHARED}.`,
    ];
  }
  const found = SERVERLESS_ENV.find(([name]) => env[name]);
  return (
    found && [
      found[1],
      `Use ${SHARED}; where there is no TCP, upstashStore from @payhook/store-upstash${found[0] === 'AWS_LAMBDA_FUNCTION_NAME' ? ' or dynamoStore from @payhook/store-dynamodb' : ''}.`,
    ]
  );
}

/**
 * Warn, through the receiver's (or worker's) logger, when its store is a memory store that cannot
 * deduplicate here: `serverless` (instances that each keep their own records and start empty), or
 * `several-copies` (another copy of core in this process has receivers with memory stores of its
 * own). Several memory stores of one copy (tests make many) are not warned of, nor is a second
 * copy under NODE_ENV=test, as test runners load modules afresh for each test file on purpose.
 */
export function warnOfMemoryStore(store: Store, log: Log, user: MemoryStoreUser): void {
  const mark = (store as { [MEMORY_STORE]?: Mark })[MEMORY_STORE];
  if (!mark?.warn) return;
  const g = globalThis as Globals & { [MEMORY_STORE_REGISTRY]?: Registry };
  const registry = registryOf(g);
  const once = (cause: string, fields: object, where: string, advice: string) => {
    if (!firstTime(registry, cause)) return;
    log.write(
      'warn',
      { cause, ...fields },
      `[@payhook/core] the memory store cannot deduplicate ${where}, so a duplicate delivery that reaches another one runs its handlers again. ${advice} To silence this: memoryStore({ warn: false }).`,
    );
  };
  const env = readEnv(g);
  const platform = serverless(g, env);
  if (platform)
    once('serverless', { platform: platform[0] }, `on ${platform[0]}: each instance keeps its own records and starts empty`, platform[1]);
  // The store's copy, not the caller's: one memory store shared by two copies (through globalThis) does deduplicate.
  const copies = (registry.copies[user] ??= []);
  if (!copies.includes(mark.copy)) copies.push(mark.copy);
  if (copies.length > 1 && env.NODE_ENV !== 'test') {
    const where = `here: @payhook/core is loaded ${copies.length} times in this process (Next.js: App Router and Pages Router routes, a \`next dev\` reload) and each copy's memory stores keep their own records`;
    once('several-copies', { copies: copies.length }, where, `Use ${SHARED}.`);
  }
}

/**
 * Warn once per process, at the first 202 a handler past its budget got without the platform's
 * `waitUntil`, when the platform is serverless: it may freeze or end the instance once the answer
 * is sent, and the service, which has its 2xx, never sends the event again.
 */
export function warnOfFrozenWork(log: Log): void {
  const g = globalThis as Globals & { [MEMORY_STORE_REGISTRY]?: Registry };
  const registry = registryOf(g);
  // Once warned, later 202s read nothing: the environment is looked at until the warning is given.
  if (registry.warned.includes('accepted-serverless')) return;
  const platform = serverless(g, readEnv(g));
  if (!platform || !firstTime(registry, 'accepted-serverless')) return;
  log.write(
    'warn',
    { cause: 'accepted-serverless', platform: platform[0] },
    `[@payhook/core] a handler ran past budgetMs and was answered 202 on ${platform[0]} with no waitUntil: the platform may freeze the work once the answer is sent, and the service will not send the event again. Pass the platform's waitUntil (Vercel, Netlify, Workers), or set afterBudget: 'retry' so the answer is 503 and the service retries.`,
  );
}

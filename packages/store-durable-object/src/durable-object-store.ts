import { DEFAULT_RETENTION_MS, positiveMs, within } from '@payhook/core/store';
import type { ClaimResult, Store, StoreRecord } from '@payhook/core/store';
import { NAME, type StoreCall } from './protocol.js';

/** The part of a Durable Object namespace binding (`env.PAYHOOK_STORE`) the store uses. */
export interface StoreNamespace {
  /** The id of the Durable Object of that name (a shard's). */
  idFromName(name: string): unknown;
  /** The stub of the Durable Object of that id. */
  get(id: never): {
    /** Sends a request to the Durable Object: its `fetch` answers it. */
    fetch(input: string, init?: RequestInit): Promise<Response>;
  };
}

/** What `durableObjectStore` takes: the namespace binding; the rest have defaults. */
export interface DurableObjectStoreOptions {
  /** The binding of `PayhookStoreObject` (`env.PAYHOOK_STORE`). */
  namespace: StoreNamespace;
  /**
   * How many Durable Objects the keys are spread over, by a hash of the key. Each runs one request
   * at a time, so more shards carry more deliveries at once. Default 16. Choose it once: a key
   * claimed under one count is looked for in another shard under a different count.
   */
  shards?: number;
  /** How long done and released records are kept. Default 30 days (`DEFAULT_RETENTION_MS`). */
  retentionMs?: number;
  /** Longest wait for a Durable Object's answer. Default 2000 ms, under the receiver's budget. */
  timeoutMs?: number;
}

const BINDING_HELP =
  'Bind it in wrangler.toml ([[durable_objects.bindings]] name = "PAYHOOK_STORE", class_name = "PayhookStoreObject", and a migration with new_sqlite_classes = ["PayhookStoreObject"]), export { PayhookStoreObject } from your Worker, and pass env.PAYHOOK_STORE.';

/**
 * The store contract for Cloudflare Workers, in Durable Objects: each shard of the dedupe keys
 * lives in one `PayhookStoreObject`, which decides its claims one at a time, on one machine,
 * durably, for every isolate of the Worker. One subrequest per claim and one per complete. When
 * the Durable Object does not answer within `timeoutMs`, the receiver answers 503 and the service
 * retries.
 *
 * @example
 * import { createReceiver } from '@payhook/core';
 * import { durableObjectStore } from '@payhook/store-durable-object';
 * export { PayhookStoreObject } from '@payhook/store-durable-object';
 *
 * let receiver;
 * export default {
 *   fetch(request, env, ctx) {
 *     receiver ??= createReceiver({ secret: env.PAYHOOK_WEBHOOK_SECRET, store: durableObjectStore({ namespace: env.PAYHOOK_STORE }) })
 *       .on('payment.success', fulfil);
 *     return receiver.handle(request, { waitUntil: (p) => ctx.waitUntil(p) });
 *   },
 * };
 */
export function durableObjectStore(options: DurableObjectStoreOptions): Store {
  const { namespace } = options;
  if (typeof namespace?.idFromName !== 'function' || typeof namespace.get !== 'function') {
    throw new TypeError(
      `${NAME} namespace must be the Durable Object binding of PayhookStoreObject; got ${describe(namespace)}. ${BINDING_HELP}`,
    );
  }
  const shards = options.shards ?? 16;
  if (!(Number.isInteger(shards) && shards >= 1 && shards <= 1024)) {
    throw new RangeError(`${NAME} shards must be a whole number from 1 to 1024; got ${shards}. Leave it unset for 16.`);
  }
  const retentionMs = positiveMs(options.retentionMs ?? DEFAULT_RETENTION_MS, 'retentionMs', NAME);
  const timeoutMs = positiveMs(options.timeoutMs ?? 2_000, 'timeoutMs', NAME);
  // Ids are kept per shard; stubs are not: a stub is an I/O object of the request that made it, and
  // workerd refuses it to any other request.
  const ids = new Map<number, unknown>();
  const stubOf = (key: string) => {
    const shard = fnv1a(key) % shards;
    let id = ids.get(shard);
    if (id === undefined) ids.set(shard, (id = namespace.idFromName(`payhook-store-${shard}`)));
    return namespace.get(id as never);
  };

  async function call(what: string, body: StoreCall): Promise<unknown> {
    try {
      const response: Response = await within<Response>(
        timeoutMs,
        stubOf(body.key).fetch('https://payhook-store.internal/', { method: 'POST', body: JSON.stringify(body) }),
        'the Durable Object',
      );
      const answer = (await response.json()) as { result?: unknown; error?: string };
      if (!response.ok) throw new Error(answer.error ?? `answered ${response.status}`);
      return answer.result;
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw new Error(
        `${NAME} could not ${what} "${body.key}" (${reason}). The receiver answers 503 so the service retries; if it goes on, check that PayhookStoreObject is exported and bound. ${BINDING_HELP}`,
        { cause },
      );
    }
  }

  return {
    retentionMs,
    async claim(key, leaseMs) {
      return (await call('claim', { op: 'claim', key, leaseMs: positiveMs(leaseMs, 'leaseMs', NAME), retentionMs })) as ClaimResult;
    },
    async complete(key, token, opts = {}) {
      const ttlMs = positiveMs(opts.ttlMs ?? retentionMs, 'ttlMs', NAME);
      const outcome = opts.outcome === undefined || opts.outcome === 'ok' ? 'ok' : 'rejected';
      return (await call('complete', { op: 'complete', key, token, outcome, ttlMs })) === true;
    },
    async release(key, token) {
      return (await call('release', { op: 'release', key, token, retentionMs })) === true;
    },
    async extend(key, token, leaseMs) {
      return (await call('extend', { op: 'extend', key, token, leaseMs: positiveMs(leaseMs, 'leaseMs', NAME) })) === true;
    },
    async get(key) {
      return ((await call('read', { op: 'get', key })) ?? undefined) as StoreRecord | undefined;
    },
  };
}

/** FNV-1a over the key's UTF-16 code units: the same shard for a key in every isolate. */
function fnv1a(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

const describe = (value: unknown) => (value === undefined ? 'undefined (no such binding in env?)' : value === null ? 'null' : typeof value);

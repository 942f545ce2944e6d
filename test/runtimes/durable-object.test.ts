import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@payhook/core';
import { durableObjectStore } from '@payhook/store-durable-object';
import { createReceiver } from '@payhook/core';
import { createEvent, signedRequest } from '@payhook/testing';
import { storeConformance } from '@payhook/testing/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromRuntimes, wranglerBuild } from './wrangler-build.js';
import { expectOnceAcross, type MatrixTarget, post, runsOf } from './cases.js';
// @ts-expect-error plain JavaScript, shared with the runtimes that load it as it is
import { MATRIX_SECRET } from './app/matrix-app.mjs';

type Fetcher = { fetch(url: string, init?: RequestInit): Promise<Response> };
type Miniflare = { ready: Promise<URL>; getWorker(name: string): Promise<Fetcher>; dispose(): Promise<void> };

const out = mkdtempSync(join(tmpdir(), 'payhook-do-worker-'));
let mf: Miniflare;
/** The two Workers: the same bundle twice, two isolates, one Durable Object namespace (declared by `one`). */
const workers: Record<'one' | 'two', Fetcher> = {} as never;
let bundle = '';

beforeAll(async () => {
  bundle = await wranglerBuild('do-worker/wrangler.toml', out);
  const { Miniflare } = (await import(fromRuntimes.resolve('miniflare'))) as { Miniflare: new (o: object) => Miniflare };
  const worker = (name: string, durableObject: object) => ({
    name,
    modules: true,
    scriptPath: join(out, 'dist', 'worker.js'),
    modulesRoot: join(out, 'dist'),
    compatibilityDate: '2026-04-20',
    durableObjects: { PAYHOOK_STORE: durableObject },
  });
  mf = new Miniflare({
    workers: [
      worker('one', { className: 'PayhookStoreObject', useSQLite: true }),
      worker('two', { className: 'PayhookStoreObject', scriptName: 'one', useSQLite: true }),
    ],
    host: '127.0.0.1',
    port: 0,
  });
  await mf.ready;
  workers.one = await mf.getWorker('one');
  workers.two = await mf.getWorker('two');
}, 90_000);
afterAll(async () => {
  await mf?.dispose();
  rmSync(out, { recursive: true, force: true });
});

let made = 0;
/**
 * A store in this process whose every call runs `durableObjectStore` in a Worker on workerd: the
 * stores the suite makes take turns between the two Workers, so "several clients" are two isolates.
 */
function inWorker(): Store {
  const worker = workers[made++ % 2 === 0 ? 'one' : 'two'];
  const call =
    (method: string) =>
    async (...args: unknown[]) => {
      const response = await worker.fetch('http://worker/store', { method: 'POST', body: JSON.stringify({ method, args }) });
      const answer = (await response.json()) as { result?: unknown; error?: string };
      if (answer.error !== undefined) throw new Error(answer.error);
      return answer.result ?? undefined;
    };
  return {
    claim: call('claim'),
    complete: call('complete'),
    release: call('release'),
    extend: call('extend'),
    get: call('get'),
  } as Store;
}

describe('the Durable Object store, on workerd', () => {
  it('bundles no Node module and no SQLite driver', () => {
    expect(bundle).not.toMatch(/from\s*["']node:|require\(["']node:|import\(["']node:/);
    expect(bundle).not.toMatch(/better-sqlite3|getBuiltinModule/);
  });

  storeConformance('durable object (workerd, through a Worker)', { make: inWorker, shared: true });

  it('runs a handler once for 20 concurrent copies sent to two Worker isolates', async () => {
    const at = (name: 'one' | 'two'): MatrixTarget => ({
      webhooks: 'http://worker/do/webhooks',
      runs: 'http://worker/do/runs',
      fetch: (u, i) => workers[name].fetch(u, i),
    });
    await expectOnceAcross([at('one'), at('two')]);
  });

  it('on the memory store, the same two isolates run it twice: the bug the store removes', async () => {
    const at = (name: 'one' | 'two'): MatrixTarget => ({
      webhooks: 'http://worker/memory/webhooks',
      runs: 'http://worker/memory/runs',
      fetch: (u, i) => workers[name].fetch(u, i),
    });
    const event = createEvent('payment.success');
    for (const name of ['one', 'two'] as const) expect((await post(at(name).webhooks, event, undefined, at(name).fetch)).status).toBe(200);
    expect((await Promise.all([at('one'), at('two')].map((t) => runsOf(t, event)))).map((r) => r.started)).toEqual([1, 1]);
  });

  it('answers 503 within the budget when the Durable Object does not answer', async () => {
    const namespace = { idFromName: () => 'id', get: () => ({ fetch: () => new Promise<Response>(() => {}) }) };
    const errors: string[] = [];
    const receiver = createReceiver({
      secret: MATRIX_SECRET,
      store: durableObjectStore({ namespace, timeoutMs: 200 }),
      budgetMs: 2_000,
      logger: { warn() {}, error: (_fields: object, message: string) => errors.push(message) },
    }).on('payment.success', () => {});
    const started = performance.now();
    const answer = await receiver.handle(signedRequest(createEvent('payment.success'), { secret: MATRIX_SECRET }));
    expect(answer.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(errors.join('\n')).toMatch(/store-unavailable|could not claim/);
  });

  it('refuses a missing binding and a bad shard count, naming the fix', () => {
    expect(() => durableObjectStore({ namespace: undefined as never })).toThrow(
      /^\[@payhook\/store-durable-object\] namespace must be the Durable Object binding of PayhookStoreObject; got undefined \(no such binding in env\?\)\. Bind it in wrangler\.toml/,
    );
    const namespace = { idFromName: () => 'id', get: () => ({ fetch: async () => new Response() }) };
    expect(() => durableObjectStore({ namespace, shards: 0 })).toThrow(/shards must be a whole number from 1 to 1024/);
  });
});

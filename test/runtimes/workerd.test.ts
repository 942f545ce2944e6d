import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultDedupeKey } from '@payhook/core';
import { createEvent, signedBody } from '@payhook/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromRuntimes, wranglerBuild } from './wrangler-build.js';
import { expectCoreCases, expectOnceAcross, post, type Runs } from './cases.js';
import { requireRedis } from '@payhook/test-support/services';
import { startUpstashBridge, type UpstashBridge } from '@payhook/test-support/servers/upstash-bridge';
// @ts-expect-error plain JavaScript, shared with the runtimes that load it as it is
import { MATRIX_SECRET, PLATFORM_SECRETS, SLOW_HANDLER_MS } from './app/matrix-app.mjs';

const COMPATIBILITY_DATE = '2026-04-20';
const redisUrl = await requireRedis();

type Miniflare = { ready: Promise<URL>; dispose(): Promise<void> };

describe('Cloudflare Workers (workerd), built by wrangler without nodejs_compat', () => {
  const out = mkdtempSync(join(tmpdir(), 'payhook-worker-'));
  let bundle = '';
  let mf: Miniflare;
  let origin: URL;
  // A second workerd running the same bundle: another isolate, with memory of its own.
  let other: Miniflare | undefined;
  let otherOrigin: URL;
  let bridge: UpstashBridge | undefined;

  beforeAll(async () => {
    bundle = await wranglerBuild('worker/wrangler.toml', out);
    const { Miniflare } = (await import(fromRuntimes.resolve('miniflare'))) as { Miniflare: new (o: object) => Miniflare };
    if (redisUrl) bridge = await startUpstashBridge(redisUrl);
    const upstash = bridge ? { PAYHOOK_UPSTASH_URL: bridge.url, PAYHOOK_UPSTASH_TOKEN: bridge.token } : {};
    const worker = () =>
      new Miniflare({
        modules: true,
        scriptPath: join(out, 'dist', 'worker.js'),
        modulesRoot: join(out, 'dist'),
        compatibilityDate: COMPATIBILITY_DATE,
        bindings: { WEBHOOK_SECRET: MATRIX_SECRET, ...upstash },
        host: '127.0.0.1',
        port: 0,
      });
    mf = worker();
    // Fails here if anything at module scope is forbidden in a Worker (receivers are made there).
    origin = await mf.ready;
    if (bridge) {
      other = worker();
      otherOrigin = await other.ready;
    }
  }, 90_000);
  afterAll(async () => {
    await mf?.dispose();
    await other?.dispose();
    await bridge?.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('bundles no Node module: no node: import, no raw-body, no node:crypto build of core', () => {
    expect(bundle).not.toMatch(/from\s*["']node:|require\(["']node:|import\(["']node:/);
    const sources = (JSON.parse(readFileSync(join(out, 'dist', 'worker.js.map'), 'utf8')) as { sources: string[] }).sources.join('\n');
    expect(sources).toMatch(/platform\/web/);
    expect(sources).not.toMatch(/platform\/node|adapter-node|node-bridge|raw-body|iconv-lite/);
  });

  it('answers the core cases from a receiver made at module scope, its late handler kept alive by ctx.waitUntil', () =>
    expectCoreCases({ webhooks: new URL('/plain/webhooks', origin).href, runs: new URL('/plain/runs', origin).href }));

  it('answers the core cases through @payhook/hono, its receiver built once from env', async () => {
    await expectCoreCases({ webhooks: new URL('/hono/webhooks', origin).href, runs: new URL('/hono/runs', origin).href });
    expect(await (await fetch(new URL('/hono/builds', origin))).json()).toEqual({ builds: 1 });
  });

  it("serves many accounts on one route (made at module scope): A's secret never opens B's URL, an unknown account is a bare 401", async () => {
    const event = createEvent('payment.success');
    const at = (account: string) => new URL(`/platform/webhooks/${account}`, origin).href;
    const refused = { status: 401, text: '{"outcome":"unauthorized"}' };
    expect(await post(at('acct_B'), event, PLATFORM_SECRETS.acct_A)).toEqual(refused);
    expect(await post(at('acct_nobody'), event, PLATFORM_SECRETS.acct_A)).toEqual(refused);
    expect((await post(at('acct_A'), event, PLATFORM_SECRETS.acct_A)).status).toBe(200);
    const query = new URLSearchParams({ reference: event.reference, key: `@acct_A:${defaultDedupeKey(event)}` });
    const runs = (await (await fetch(new URL(`/platform/runs?${query}`, origin))).json()) as Runs;
    expect(runs).toMatchObject({ started: 1, finished: 1, record: { state: 'done', outcome: 'ok' } });
  });

  it('without waitUntil, workerd cancels a handler past the budget after the 202: what the hook is for', async () => {
    const event = createEvent('payment.success', { merchantReference: `slow-nowait` });
    const { body, headers } = signedBody(event, { secret: MATRIX_SECRET });
    expect((await fetch(new URL('/nowait/webhooks', origin), { method: 'POST', body: body as string, headers })).status).toBe(202);
    // Wait on workerd's clock, in another process: twice as long as the handler needs.
    await new Promise((resolve) => setTimeout(resolve, 2 * SLOW_HANDLER_MS));
    const query = new URLSearchParams({ reference: event.reference, key: defaultDedupeKey(event) });
    const runs = (await (await fetch(new URL(`/nowait/runs?${query}`, origin))).json()) as Runs;
    expect(runs).toMatchObject({ started: 1, finished: 0, record: { state: 'claimed' } });
  });

  it.skipIf(!redisUrl)('on the Upstash store, 20 concurrent copies sent to two workerd instances run the handler once', async () => {
    const at = (o: URL) => ({ webhooks: new URL('/upstash/webhooks', o).href, runs: new URL('/upstash/runs', o).href });
    await expectOnceAcross([at(origin), at(otherOrigin)]);
  });
});

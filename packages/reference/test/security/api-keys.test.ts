import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createReferenceService, hashKey } from '@payhook/reference';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  LIVE_KEY,
  merchants,
  OTHER_KEY,
  READ_ONLY_KEY,
  receiver,
  REVOKED_KEY,
  SANDBOX_KEY,
  start,
  validInput,
} from '@payhook/test-support/apps/reference-service';

const root = fileURLToPath(new URL('../../../..', import.meta.url));
const KEYS = [SANDBOX_KEY, OTHER_KEY, LIVE_KEY, READ_ONLY_KEY, REVOKED_KEY];
/** The part after the prefix: what must never appear, however the key is quoted or cut. */
const secretPart = (key: string) => key.replace(/^sk_(test|live)_/, '');
const leaks = (text: string, keys = KEYS) => keys.filter((k) => text.includes(secretPart(k)));

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (cleanup.length) await cleanup.pop()!();
});

describe('API keys are never stored or shown in plain text', () => {
  it('the running service holds no plain key: a heap snapshot of a service that authenticated 3 requests does not contain it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payhook-heap-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        join(root, 'packages/reference/test/security/api-key-heap-child.ts'),
        join(dir, 'service.heapsnapshot'),
      ],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code, err).toBe(0);
    const { file, key } = JSON.parse(out) as { file: string; key: string };
    const snapshot = readFileSync(file, 'utf8');
    expect(snapshot.length).toBeGreaterThan(1_000_000);
    // The digest is what the registry keeps; the key itself is gone.
    expect(snapshot.includes(hashKey(key))).toBe(true);
    expect(snapshot.includes(secretPart(key))).toBe(false);
  }, 60_000);

  it('the registry and the service object show no key to inspection', () => {
    const service = createReferenceService({ clock: 'manual', merchants: merchants() });
    cleanup.push(() => service.close());
    const seen = inspect(service, { depth: 20, showHidden: true, getters: true });
    expect(leaks(seen)).toEqual([]);
    expect(leaks(inspect(service.merchants.list(), { depth: 20, showHidden: true }))).toEqual([]);
    expect(leaks(JSON.stringify(service.merchants.list()))).toEqual([]);
  });

  it('answers, logs, onError, the dashboard, sandbox deliveries and webhook bodies never carry a key', async () => {
    const logged: string[] = [];
    const capture = (...args: unknown[]) =>
      void logged.push(args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 10 }))).join(' '));
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) vi.spyOn(console, level).mockImplementation(capture);
    const hook = await receiver();
    cleanup.push(hook.close);
    const s = await start({ allowHttpCallbacks: true, merchants: merchants(hook.url), onError: capture });
    cleanup.push(s.close);
    const answers: string[] = [];
    const call = async (...args: Parameters<typeof s.call>) => {
      const res = await s.call(...args);
      answers.push(JSON.stringify(res.json), JSON.stringify([...res.headers]));
      return res;
    };
    const init = await call('POST', '/v1/transactions/initialize', { body: validInput() });
    const reference = init.json.reference as string;
    await call('POST', `/_sandbox/transactions/${reference}/pay`);
    await s.service.clock.advance(0);
    // Wrong, revoked, live-on-sandbox, near-miss, malformed and badly placed keys.
    await call('GET', '/v1/transactions', { key: REVOKED_KEY });
    await call('GET', '/v1/transactions', { key: `${SANDBOX_KEY}x` });
    await call('GET', '/v1/transactions', { key: SANDBOX_KEY.slice(0, -1) });
    await call('GET', '/v1/transactions', { key: null, headers: { authorization: `Basic ${SANDBOX_KEY}` } });
    await call('GET', '/v1/transactions', { key: null, headers: { authorization: `Bearer ${SANDBOX_KEY} ${OTHER_KEY}` } });
    await call('POST', '/_sandbox/faults', { key: LIVE_KEY, body: { type: 'drop' } });
    await call('POST', '/v1/transactions/initialize', { key: READ_ONLY_KEY, body: validInput() });
    const sandboxDeliveries = await call('GET', `/_sandbox/deliveries?reference=${reference}`);
    expect(sandboxDeliveries.json).toHaveLength(1);
    const dashboard = await (await fetch(`${s.url}/_dashboard`)).text();
    const detail = await (await fetch(`${s.url}/_dashboard/transactions/${reference}`)).text();
    expect(detail).toContain(reference);

    // The near-miss keys above echo nothing of the key in the answers either.
    expect(leaks(answers.join('\n'))).toEqual([]);
    expect(leaks(logged.join('\n'))).toEqual([]);
    expect(leaks(dashboard + detail)).toEqual([]);
    expect(leaks(JSON.stringify(s.service.deliveries()))).toEqual([]);
    expect(leaks(hook.requests.map((r) => r.body.toString() + JSON.stringify(r.headers)).join('\n'))).toEqual([]);
  });

  it('the CLI masks keys passed with --api-key, never prints keys from a config file, and does not echo a bad key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payhook-cli-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const config = join(dir, 'config.json');
    const fileKey = 'sk_test_from_the_config_file_0099';
    writeFileSync(
      config,
      JSON.stringify({ merchants: [{ id: 'shop', apiKeys: [{ key: fileKey }], webhookSecret: 'whsec_config_file_secret' }] }),
    );
    const cli = join(root, 'packages/reference/src/cli.ts');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', cli, 'serve', '--port', '0', '--config', config, '--api-key', SANDBOX_KEY, '--api-key', LIVE_KEY],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    let bannerPrinted!: () => void;
    // Read on each chunk, no polling: the banner's last line is the callback URL (or the process exits first).
    const banner = new Promise<void>((r) => (bannerPrinted = r));
    const read = (d: Buffer) => {
      output += d;
      if (/callback URL/.test(output)) bannerPrinted();
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await Promise.race([banner, exited]);
    child.kill('SIGTERM');
    await exited;
    expect(output).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(output).toMatch(/sandbox key\s+sk_test_\S*…\S* \(given; not shown\)/);
    expect(leaks(output, [SANDBOX_KEY, LIVE_KEY, fileKey])).toEqual([]);

    const bad = spawnSync(process.execPath, ['--import', 'tsx', cli, 'serve', '--port', '0', '--api-key', 'sk_test_sh0rt'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/API key must look like/);
    expect(bad.stderr + bad.stdout).not.toContain('sh0rt');
  }, 30_000);
});

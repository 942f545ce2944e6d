import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, finish, killLeftovers, run, signatureOf, stop, urlOf } from './cli-helpers.js';
import { receiver, type Receiver } from '@payhook/test-support/apps/reference-service';

beforeAll(buildCli, 120_000);
afterEach(killLeftovers);

describe('payhook-reference serve', () => {
  it('prints its real URL for --port 0, serves the API, and exits 0 on SIGTERM; the pages answer to --page-host names', async () => {
    const key = 'sk_test_cli_given_key_123';
    const p = run([
      'serve',
      '--port',
      '0',
      '--api-key',
      key,
      '--webhook-secret',
      'whsec_cli_secret_value',
      '--callback-url',
      'https://shop.example/webhooks',
      '--page-host',
      'pay.local',
    ]);
    const url = await urlOf(p);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:(?!0\b)\d+$/);
    const res = await fetch(`${url}/v1/transactions`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: [], nextCursor: null, hasMore: false });
    // Keys and secrets given on the command line are never echoed in full.
    expect(p.output()).not.toContain(key);
    expect(p.output()).not.toContain('whsec_cli_secret_value');
    const { port } = new URL(url);
    const dashboard = (host: string) =>
      new Promise<number>((resolve, reject) =>
        get(`${url}/_dashboard`, { headers: { host } }, (r) => resolve(r.resume().statusCode!)).on('error', reject),
      );
    expect([await dashboard(`pay.local:${port}`), await dashboard(`localhost:${port}`), await dashboard(`evil.example:${port}`)]).toEqual([
      200, 200, 403,
    ]);
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
      expect(res.status).toBe(200);
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

const banner = (output: string) => ({
  key: /sandbox key\s+(sk_test_\S+)/.exec(output)![1]!,
  secret: /webhook secret\s+(whsec_\S+)/.exec(output)![1]!,
});
const bodies = (r: Receiver) => r.requests.map((q) => JSON.parse(q.body.toString()) as Record<string, unknown>);

describe('payhook-reference trigger, resend, the live log and --state', () => {
  it('trigger sends a signed payment.success; resend sends it again; a restart with --state keeps the transaction, deliveries and key', async () => {
    const hook = await receiver();
    const state = join(mkdtempSync(join(tmpdir(), 'payhook-state-')), 'state.json');
    const p = run(['serve', '--port', '0', '--allow-http-callbacks', '--callback-url', hook.url, '--state', state]);
    const url = await urlOf(p);
    const { key, secret } = banner(p.output());
    expect(p.output()).toContain(`state file      ${state} (new`);

    const t = await finish(['trigger', 'payment.success', '--url', url, '--api-key', key, '--data', 'amount=12.50']);
    expect(t.code, t.output).toBe(0);
    const reference = /Created (P[0-9A-F]{8}\d{8})/.exec(t.output)![1]!;
    expect(t.output).toMatch(/dlv_1 payment\.success → 200 in \d+ ms \(delivered\)/);
    expect(hook.requests).toHaveLength(1);
    const [first] = hook.requests;
    expect(first!.headers['x-service-signature']).toBe(signatureOf(first!.body, secret));
    expect(bodies(hook)[0]).toMatchObject({ event: 'payment.success', reference, amount: '12.50', status: 'completed', mode: 'sandbox' });
    await p.printed(new RegExp(`Z payment\\.success ${reference} dlv_1 attempt 1/5 → 200 in \\d+ ms, delivered`));

    const r = await finish(['resend', 'dlv_1', '--url', url], { PAYHOOK_REFERENCE_API_KEY: key });
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(/Resent dlv_1 as dlv_2/);
    expect(hook.requests).toHaveLength(2);
    expect(hook.requests[1]!.body.equals(first!.body)).toBe(true);
    expect(hook.requests[1]!.headers['x-service-signature']).toBe(signatureOf(first!.body, secret));
    await p.printed(/dlv_2 attempt 1\/5 → 200/);
    await stop(p);

    // Keys are kept as digests only; the secret must be kept to sign.
    const saved = readFileSync(state, 'utf8');
    expect(saved).not.toContain(key);
    expect(saved).toContain(createHash('sha256').update(key).digest('hex'));

    const again = run(['serve', '--port', '0', '--allow-http-callbacks', '--state', state]);
    const url2 = await urlOf(again);
    expect(again.output()).toContain('loaded 1 transactions and 2 deliveries');
    expect(again.output()).not.toMatch(/sk_test_/);
    const auth = { authorization: `Bearer ${key}` };
    const res = await fetch(`${url2}/v1/transactions/${reference}`, { headers: auth });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ reference, status: 'completed', amount: '12.50' });
    const deliveries = (await (await fetch(`${url2}/_sandbox/deliveries?reference=${reference}`, { headers: auth })).json()) as {
      id: string;
      resendOf: string | null;
      state: string;
    }[];
    expect(deliveries.map((d) => [d.id, d.state, d.resendOf])).toEqual([
      ['dlv_1', 'delivered', null],
      ['dlv_2', 'delivered', 'dlv_1'],
    ]);
    // New deliveries go on numbering after the saved ones, to the saved callback URL.
    const t2 = await finish(['trigger', 'payment.failed', '--url', url2, '--api-key', key]);
    expect(t2.code, t2.output).toBe(0);
    expect(t2.output).toMatch(/dlv_3 payment\.failed → 200/);
    await stop(again);
    await hook.close();
  }, 60_000);

  it('serve --signature-header X-Epay-Signature signs deliveries in that header, as ePay does', async () => {
    const hook = await receiver();
    const p = run([
      'serve',
      '--port',
      '0',
      '--allow-http-callbacks',
      '--quiet',
      '--signature-header',
      'X-Epay-Signature',
      '--callback-url',
      hook.url,
    ]);
    const url = await urlOf(p);
    const { key, secret } = banner(p.output());
    expect(p.output()).toContain('signed in       X-Epay-Signature');
    const t = await finish(['trigger', 'payment.success', '--url', url, '--api-key', key]);
    expect(t.code, t.output).toBe(0);
    const [request] = hook.requests;
    expect(request!.headers['x-epay-signature']).toBe(signatureOf(request!.body, secret));
    expect(request!.headers['x-service-signature']).toBeUndefined();
    await stop(p);
    const bad = await finish(['serve', '--port', '0', '--signature-header', 'X Epay']);
    expect([bad.code, bad.output]).toEqual([
      2,
      expect.stringMatching(
        /^\[@payhook\/reference\] --signature-header must be an HTTP header name such as X-Epay-Signature; got "X Epay"/m,
      ),
    ]);
    await hook.close();
  }, 30_000);

  it('trigger payment.refunded sends success, refunding and refunded in order; --quiet prints no live log', async () => {
    const hook = await receiver();
    const p = run(['serve', '--port', '0', '--allow-http-callbacks', '--quiet']);
    const url = await urlOf(p);
    const { key } = banner(p.output());
    const t = await finish([
      'trigger',
      'payment.refunded',
      '--url',
      url,
      '--api-key',
      key,
      '--callback-url',
      hook.url,
      '--data',
      'merchantReference=order-77',
    ]);
    expect(t.code, t.output).toBe(0);
    expect(t.output).toMatch(/pay → completed\n\s+refund → refunding\n\s+complete-refund → refunded/);
    expect(bodies(hook).map((b) => [b.event, b.merchantReference])).toEqual([
      ['payment.success', 'order-77'],
      ['payment.refunding', 'order-77'],
      ['payment.refunded', 'order-77'],
    ]);
    // go-sdk types.go WebhookEvent: "PaidAt is nil for every non-success event".
    expect(bodies(hook).map((b) => b.paidAt)).toEqual([expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), null, null]);
    expect(p.output()).not.toMatch(/attempt \d\/5/);
    await stop(p);
    await hook.close();
  }, 30_000);

  it('a receiver answering 500: trigger exits 1 and names the resend command; the live log says when the retry is due', async () => {
    const hook = await receiver((_n, _r, res) => {
      res.writeHead(500).end('down for maintenance');
    });
    const p = run(['serve', '--port', '0', '--allow-http-callbacks', '--callback-url', hook.url]);
    const url = await urlOf(p);
    const { key } = banner(p.output());
    const t = await finish(['trigger', 'payment.cancelled', '--url', url, '--api-key', key]);
    expect(t.code).toBe(1);
    expect(t.output).toMatch(
      /\[@payhook\/reference\] the payment\.cancelled delivery for P\w+ was not accepted .*payhook-reference resend dlv_1/,
    );
    await p.printed(
      /payment\.cancelled P\w+ dlv_1 attempt 1\/5 → 500 in \d+ ms, answered 500, not 2xx; retry 2\/5 at \S+Z \(60 s after this attempt started\)/,
    );
    await stop(p);
    await hook.close();
  }, 30_000);

  it('bad flags are a clear error with exit code 2; --help works for each command', async () => {
    const key = 'sk_test_flags_key_0001';
    const cases: [string[], RegExp][] = [
      [['trigger', 'payment.success'], /--api-key is required/],
      [['trigger', 'payment.nope', '--api-key', key], /unknown event "payment\.nope"/],
      [['trigger', 'payment.success', '--api-key', 'sk_live_abcdefghij'], /must be a sandbox key/],
      [['trigger', 'payment.success', '--api-key', key, '--data', 'amount'], /--data takes key=value/],
      [['trigger', 'payment.success', '--api-key', key, '--data', 'mode=live'], /--data cannot set "mode"/],
      [['trigger', 'payment.success', '--api-key', key, '--url', 'ftp://x'], /--url must start with http/],
      [['trigger', 'payment.success', '--api-key', key, '--timeout', 'soon'], /--timeout must be a number of seconds/],
      [['resend', 'delivery-1', '--api-key', key], /is not a delivery id/],
      [['resend', '--api-key', key], /name the delivery to resend/],
      [['serve', '--port', 'eighty'], /--port must be a whole number/],
      [['serve', '--api-key', 'secret'], /--api-key: an API key must look like sk_test_/],
      [['serve', '--state'], /--state/],
      [['serve', '--page-host', 'http://pay.local'], /--page-host: "http:\/\/pay\.local" is not a host name/],
      [['serve', '--public-url', 'pay.example.test'], /--public-url: "pay\.example\.test" is not a URL/],
      [['serve', '--verbose'], /Unknown option '--verbose'/],
      [['deploy'], /unknown command "deploy"/],
    ];
    const results = await Promise.all(cases.map(([args]) => finish(args)));
    results.forEach(({ code, output }, i) => {
      expect({ args: cases[i]![0], code }).toEqual({ args: cases[i]![0], code: 2 });
      expect(output).toMatch(/^\[@payhook\/reference\] /);
      expect(output).toMatch(cases[i]![1]);
    });
    for (const command of ['serve', 'trigger', 'resend']) {
      const help = await finish([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.output).toContain(`Usage: payhook-reference ${command}`);
    }
    const unreachable = await finish(['trigger', 'payment.success', '--api-key', key, '--url', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toMatch(/cannot reach the service at http:\/\/127\.0\.0\.1:9 .*payhook-reference serve/);
  }, 30_000);

  it('a corrupt or foreign state file is refused with what to do, and left as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payhook-state-'));
    for (const [content, says] of [
      ['{"format": "payhook-reference-state", "version": 1, "merch', /is not valid JSON/],
      ['{"merchants": []}', /is not a payhook-reference state file at format/],
      ['{"format": "payhook-reference-state", "version": 1, "merchants": [], "transactions": [], "deliveries": []}', /holds no merchant/],
    ] as const) {
      const file = join(dir, 'state.json');
      writeFileSync(file, content);
      const p = await finish(['serve', '--port', '0', '--state', file]);
      expect(p.code).toBe(2);
      expect(p.output).toMatch(/^\[@payhook\/reference\] the state file .*state\.json /);
      expect(p.output).toMatch(says);
      expect(p.output).toMatch(/move it away to start afresh/);
      expect(readFileSync(file, 'utf8')).toBe(content);
    }
    const missingDir = await finish(['serve', '--port', '0', '--state', join(dir, 'no-such-dir', 'state.json')]);
    expect(missingDir.code).toBe(2);
    expect(missingDir.output).toMatch(/cannot write the state file .*check the directory exists/);
  }, 30_000);
});

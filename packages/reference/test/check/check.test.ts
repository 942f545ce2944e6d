import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { formatReport } from '../../src/check/print.js';
import { listenForWebhooks, MAX_KEPT_DELIVERIES } from '../../src/check/receiver.js';
import { compare, nullable, obj, arr } from '../../src/check/shapes.js';
import { ISO_MS } from '../../src/check/spec.js';
import { listen, reference, rowsOf, runCli } from './check-helpers.js';
import { SANDBOX_KEY, SECRET } from '@payhook/test-support/apps/reference-service';

/*
 * `payhook-reference check` (issue 31): the service's black-box contract, run by the real CLI
 * against the reference service, where it must agree everywhere, and against a drifted service,
 * where it must name the drift.
 */

/**
 * A drifted service: a proxy in front of the reference that changes one shape, renaming
 * `checkoutUrl` to `checkout_url` in initialize answers. The one place a fake is right.
 */
async function drifted(target: string): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
      ) as Record<string, string>;
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(target + req.url, { method: req.method, headers, body });
      let text = await answer.text();
      if (req.url === '/v1/transactions/initialize' && answer.ok) {
        const { checkoutUrl, ...rest } = JSON.parse(text) as Record<string, unknown>;
        text = JSON.stringify({ ...rest, checkout_url: checkoutUrl });
      }
      const out: Record<string, string> = {};
      for (const name of ['content-type', 'retry-after']) if (answer.headers.has(name)) out[name] = answer.headers.get(name)!;
      res.writeHead(answer.status, out).end(text);
    });
  });
  return listen(server);
}

describe('payhook-reference check', () => {
  it('agrees everywhere with the reference service, webhook round trips and the 429 included: exit 0', async () => {
    const { url } = await reference();
    const { code, output } = await runCli(['check', url, '--key', SANDBOX_KEY, '--webhook-secret', SECRET, '--rate-limit']);
    expect(code, output).toBe(0);
    const rows = rowsOf(output);
    expect(rows.length).toBeGreaterThanOrEqual(25);
    expect(
      rows.filter((r) => r.result !== 'agree'),
      output,
    ).toEqual([]);
    const line = (name: RegExp) => rows.find((r) => name.test(r.name))!.line;
    expect(line(/payment\.cancelled round trip/)).toMatch(/received; X-Service-Signature verified/);
    expect(line(/payment\.success round trip/)).toMatch(/received; X-Service-Signature verified/);
    expect(line(/paging to the end/)).toMatch(/11 made; [2-9] pages .*, ended/);
    expect(line(/429 with Retry-After/)).toMatch(/429 after \d+ more requests, Retry-After: \d+;/);
    expect(output).toMatch(/\d+ checks: \d+ agree, 0 DIFFER, 0 skipped\./);
    // The key is masked in the report, and no row says "undefined" (issue 51).
    expect(output).not.toContain(SANDBOX_KEY);
    expect(output).toContain('sk_test_…0001');
    expect(output).not.toContain('undefined');
  });

  it('against a service that changed one shape: exit 1, the field named with expected and got, the rest agrees', async () => {
    const { url } = await reference();
    const proxy = await drifted(url);
    const { code, output } = await runCli(['check', proxy, '--key', SANDBOX_KEY, '--webhook-secret', SECRET]);
    expect(code, output).toBe(1);
    const rows = rowsOf(output);
    expect(rows.filter((r) => r.result === 'DIFFERS').map((r) => r.name)).toEqual([
      'initialize → 2xx {reference, checkoutUrl, status, expiresAt}',
    ]);
    expect(rows.filter((r) => r.result === 'skipped').map((r) => r.name)).toEqual([expect.stringMatching(/^rate limit: .*429/)]);
    expect(output).toContain('Differences (1)');
    expect(output).toContain('checkoutUrl: expected string (URL), got absent (there is "checkout_url": string "http://127.0.0.1:');
    expect(output).toMatch(/1 DIFFERS, 1 skipped\./);
  });

  it('refuses a live key with exit 2 before any request', async () => {
    let requests = 0;
    const url = await listen(createServer((_req, res) => (requests++, res.writeHead(500).end())));
    const { code, output } = await runCli(['check', url, '--key', 'sk_live_shop_live_key_0003']);
    expect(code).toBe(2);
    expect(output).toContain('[@payhook/reference] check refuses a live key (sk_live_…): pass a sandbox key (sk_test_…)');
    expect(requests).toBe(0);
  });

  it('names a difference by its path, expected and got', () => {
    const page = obj({ data: arr(obj({ paidAt: nullable(ISO_MS) })) });
    expect(compare({ data: [{ paidAt: null }, { paidAt: 1765432100000 }] }, page)).toEqual([
      { at: 'data[1].paidAt', expected: 'string (ISO 8601 UTC with ms)|null', got: 'number 1765432100000' },
    ]);
  });

  it('prints what the service sent with its control characters escaped: no terminal sequence reaches the screen', () => {
    const hostile = 'said \x1b]52;c;cGF5aG9vaw==\x07 and \x9b2J, \u202egnp.exe\r\nforged row';
    const output = formatReport('http://127.0.0.1:1', SANDBOX_KEY, [
      {
        name: 'retrieve → 2xx Transaction',
        outcome: 'differs',
        detail: hostile,
        diffs: [{ at: 'status', expected: 'a status', got: hostile }],
      },
    ]);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters that must never reach the terminal
    expect(output).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/);
    expect(output).toContain('said \\x1b]52;c;cGF5aG9vaw==\\x07 and \\x9b2J, \\u202egnp.exe\\x0d\\x0aforged row');
  });

  it(`keeps at most ${MAX_KEPT_DELIVERIES} requests to its callback listener; the rest get 503 and are dropped`, async () => {
    const hooks = await listenForWebhooks('127.0.0.1', 0, (text) => text);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < MAX_KEPT_DELIVERIES + 20; i++) {
        const res = await fetch(hooks.url, {
          method: 'POST',
          body: JSON.stringify({ event: 'payment.success', reference: `stranger-${i}` }),
        });
        statuses.push(res.status);
        await res.arrayBuffer();
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(MAX_KEPT_DELIVERIES);
      expect(statuses.slice(MAX_KEPT_DELIVERIES)).toEqual(Array(20).fill(503));
      expect(hooks.deliveries).toHaveLength(MAX_KEPT_DELIVERIES);
    } finally {
      await hooks.close();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { reference, rowsOf, runCli, service } from './check-helpers.js';
import { READ_ONLY_KEY, REVOKED_KEY, SANDBOX_KEY, SECRET } from '@payhook/test-support/apps/reference-service';

/*
 * `payhook-reference check` as a stranger meets it (issue 51): a key the service refuses is one
 * line naming the cause and exit 3, never a table of differences; no row ever says "undefined".
 */

const WRONG_KEY = 'sk_test_not_a_key_of_this_service_0009';
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never be printed
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e\ufffd]/;

/** The one line a refusal prints: on stderr, nothing on stdout, no row. */
function oneLine(run: { stdout: string; stderr: string; output: string }): string {
  expect(run.stdout, run.output).toBe('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines, run.output).toHaveLength(1);
  expect(run.output).not.toMatch(/DIFFER|agree|undefined/);
  return lines[0]!;
}

describe('payhook-reference check with a key the service refuses', () => {
  it('a wrong key against the reference: exit 3 and one line naming the 401 and the fix', async () => {
    const { url } = await reference();
    const run = await runCli(['check', url, '--key', WRONG_KEY, '--webhook-secret', SECRET]);
    expect(run.code, run.output).toBe(3);
    const line = oneLine(run);
    expect(line).toMatch(
      /^\[@payhook\/reference\] the service refused the key sk_test_…0009: POST \/v1\/transactions\/initialize answered 401 "/,
    );
    expect(line).toContain('it is not a key of this service, or it is revoked. Pass the sandbox secret key');
    expect(line).toContain('with --key (or EPAY_SECRET_KEY)');
    expect(line).not.toContain(WRONG_KEY);
  });

  it('--help gives each exit code, 3 for a refused key', async () => {
    const run = await runCli(['check', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /Exit codes:\n {2}0 {2}every check agrees.*\n {2}1 {2}a difference.*\n {2}2 {2}a bad command line.*\n {2}3 {2}the service refused the key/,
    );
    expect(run.stdout).not.toMatch(RAW);
  });

  it("a revoked key and a key without the permission to initialize: exit 3, the service's reason in the line", async () => {
    const { url } = await reference();
    const revoked = await runCli(['check', url, '--key', REVOKED_KEY]);
    expect(revoked.code, revoked.output).toBe(3);
    expect(oneLine(revoked)).toMatch(/answered 401 ".*revoked/i);
    const readOnly = await runCli(['check', url, '--key', READ_ONLY_KEY]);
    expect(readOnly.code, readOnly.output).toBe(3);
    expect(oneLine(readOnly)).toMatch(
      /answered 403 "Missing transactions:initialize permission: use an API key that holds it\."; the service knows the key but refuses it/,
    );
  });

  it('a service that answers 403 to everything: exit 3 and one line, not a table of differences', async () => {
    const url = await service((_req, _body, res) => {
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"status":"error","data":{"message":"Forbidden"}}');
    });
    const run = await runCli(['check', url, '--key', SANDBOX_KEY]);
    expect(run.code, run.output).toBe(3);
    expect(oneLine(run)).toMatch(
      /refused the key sk_test_…0001: POST \/v1\/transactions\/initialize answered 403 "Forbidden"; the service knows the key/,
    );
  });

  it('a key the service accepts but not for the provider endpoints: those rows are skipped with the reason, the rest agree, exit 0', async () => {
    const partial = 'sk_test_no_provider_permissions_0010';
    const { url } = await reference({
      merchants: [
        {
          id: 'shop',
          apiKeys: [
            { key: partial, permissions: ['transactions:initialize', 'transactions:verify', 'transactions:cancel', 'transactions:read'] },
          ],
          webhookSecret: SECRET,
        },
      ],
    });
    const run = await runCli(['check', url, '--key', partial, '--webhook-secret', SECRET]);
    expect(run.code, run.output).toBe(0);
    const rows = rowsOf(run.output);
    const skipped = rows.filter((r) => r.result === 'skipped');
    expect(skipped.map((r) => r.name)).toEqual([
      'providers/list → 2xx {data: ProviderItem[]}',
      'providers → 2xx {data: Provider[]}',
      expect.stringMatching(/^rate limit: .*429/),
    ]);
    expect(run.output).toMatch(
      /providers\/list → 2xx \{data: ProviderItem\[\]\}: the key may not send GET \/v1\/payment-providers\/list \(403 "Missing list_platform_payment_provider permission/,
    );
    expect(rows.filter((r) => r.result === 'DIFFERS')).toEqual([]);
    expect(run.output).not.toContain('undefined');
  });
});

describe('payhook-reference check rows never say "undefined"', () => {
  it('a service that answers 500 with no body, and one that answers {} to all but initialize: every row worded', async () => {
    const empty = await service((_req, _body, res) => res.writeHead(500).end());
    const hollow = await service((req, _body, res) => {
      const initialize = req.url === '/v1/transactions/initialize';
      res.writeHead(200, { 'content-type': 'application/json' }).end(initialize ? '{"reference":"P0A1B2C3D20260101"}' : '{}');
    });
    for (const url of [empty, hollow]) {
      const run = await runCli(['check', url, '--key', SANDBOX_KEY, '--webhook-timeout', '0.2']);
      expect(run.code, run.output).toBe(1);
      expect(rowsOf(run.output).length).toBeGreaterThanOrEqual(25);
      expect(run.output).not.toContain('undefined');
      expect(run.output).not.toMatch(RAW);
    }
  });
});

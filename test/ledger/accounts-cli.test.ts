import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry } from '@payhook/core';
import { createEvent, signedBody } from '@payhook/testing';
import { payhook as run } from './trust-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'payhook-accounts-cli-'));
const SECRETS = { acct_A: 'whsec_accounts_cli_a', acct_B: 'whsec_accounts_cli_b' };
const env = { LEDGER_SQLITE_PATH: join(dir, 'platform.db'), ACCOUNT_SECRETS: JSON.stringify(SECRETS) };

/** `payhook <args> --app test/ledger/apps/accounts-app.ts`, in a process of its own, as an operator's wrapper script runs it. */
const payhook = (args: string[]) => run(args, env, 'test/ledger/apps/accounts-app.ts');

/**
 * Issue 50: an operator whose wrapper script adds `--account acct_A` cannot reach B's records by
 * id. The command answers B's id with the very exit code and output it gives an id nobody recorded.
 */
describe('payhook --account, from another process, on a platform on SQLite', () => {
  let app: typeof import('./apps/accounts-app.js');
  let ofB: LedgerEntry;
  beforeAll(async () => {
    Object.assign(process.env, env);
    app = await import('./apps/accounts-app.js');
    const event = createEvent('payment.success', { reference: 'ref_shared_cli' });
    for (const [account, secret] of Object.entries(SECRETS)) {
      const { body, headers } = signedBody(event, { secret });
      const res = await app.receiver.handle(new Request(`https://platform.example/webhooks/${account}`, { method: 'POST', body, headers }));
      expect(res.status).toBe(200);
    }
    await app.receiver.idle();
    ofB = (await app.store.ledger!.list({ account: 'acct_B' }))[0]!;
    expect(ofB?.reference).toBe('ref_shared_cli');
  });
  afterAll(async () => {
    await app?.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers show and replay of B's id, as A, exactly as an id nobody recorded", async () => {
    // An id of the ledger's shape that names no record.
    const nobody = `${ofB.id.slice(0, -8)}00000000`;
    const asA = (args: string[]) => payhook([...args, '--account', 'acct_A']);
    const [show, showNobody, replay, replayNobody, own] = await Promise.all([
      asA(['deliveries', 'show', ofB.id]),
      asA(['deliveries', 'show', nobody]),
      asA(['replay', ofB.id, '--force']),
      asA(['replay', nobody, '--force']),
      payhook(['deliveries', 'show', ofB.id, '--account', 'acct_B']),
    ]);
    const same = (r: typeof show, id: string) => ({ ...r, stderr: r.stderr.replaceAll(id, 'ID') });
    expect(same(show, ofB.id)).toEqual(same(showNobody, nobody));
    expect(show).toEqual({
      code: 2,
      stdout: '',
      stderr: `[@payhook/core] payhook: no delivery ${ofB.id} in the ledger; list them with \`payhook deliveries list\`.\n`,
    });
    expect(same(replay, ofB.id)).toEqual(same(replayNobody, nobody));
    expect(replay.code).toBe(1);
    expect(replay.stderr).toMatch(/^\[@payhook\/core\] no delivery "\S+" in the ledger: it was never recorded/);
    // Nothing ran: B's record is still the only one of B's.
    expect(await app.store.ledger!.list({ account: 'acct_B' })).toHaveLength(1);
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toContain('account: acct_B\nreference: ref_shared_cli');
  }, 120_000);

  it("lists A's record only, in an ACCOUNT column, and refuses a name that is none, escaped", async () => {
    const [listed, bad] = await Promise.all([
      payhook(['deliveries', 'list', '--account', 'acct_A']),
      payhook(['deliveries', 'list', '--account', 'acct\x1b[2J']),
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^ID\s+RECEIVED\s+ACCOUNT\s+SOURCE\s/);
    expect(lines.filter((l) => l.includes('ref_shared_cli'))).toEqual([expect.stringMatching(/^\S+\s+\S+\s+acct_A\s+webhook\s/)]);
    expect(bad).toEqual({
      code: 2,
      stdout: '',
      stderr: `[@payhook/core] payhook: --account must be an account's name, 1 to 64 ASCII letters, digits, _ or -; got "acct\\u001b[2J".\n`,
    });
  }, 120_000);
});

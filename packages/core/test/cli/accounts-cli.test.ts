import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { LedgerEntry } from '../../src/index.js';
import { main } from '../../src/cli/cli.js';
import { printList } from '../../src/cli/cli-print.js';
import { pay, receiver, state, store } from '../fixtures/platform-app.js';

const app = fileURLToPath(new URL('../fixtures/platform-app.ts', import.meta.url));

/** `payhook <args> --app <the platform's app>`, in this process (its memory ledger is the app's): its exit code and what it printed. */
async function payhook(...args: string[]) {
  const out = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    const code = await main([...args, '--app', app]);
    return { code, stdout: out.mock.calls.map((c) => String(c[0])).join('\n') };
  } finally {
    out.mockRestore();
  }
}
/** The error `payhook <args>` ends with: its class (which sets the exit code) and its message, the id named in it as ID. */
async function refusal(id: string, ...args: string[]) {
  const error = await payhook(...args).then(
    () => undefined,
    (e: Error) => e,
  );
  return error && { kind: error.constructor.name, message: id === '' ? error.message : error.message.replaceAll(id, 'ID') };
}
const rowsOf = (stdout: string) => stdout.split('\n').filter((l) => /^\S+\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s/.test(l));

/**
 * Issue 50: `payhook --account <name>` acts within one account of a platform, and answers another
 * account's id as one the ledger does not hold. A and B each have a payment of the same reference
 * by the same customer, refused (a dead letter); B has one more.
 */
describe('payhook --account', () => {
  let ofA: LedgerEntry;
  let ofB: LedgerEntry;
  beforeAll(async () => {
    expect(await pay('acct_A', 'ref_shared')).toBe('200 rejected');
    expect(await pay('acct_B', 'ref_shared')).toBe('200 rejected');
    expect(await pay('acct_B', 'ref_b_only')).toBe('200 rejected');
    await receiver.idle();
    ofA = (await store.ledger!.list({ account: 'acct_A' }))[0]!;
    ofB = (await store.ledger!.list({ account: 'acct_B' }))[1]!;
    expect([ofA?.reference, ofB?.reference]).toEqual(['ref_shared', 'ref_shared']);
  });

  it("lists that account's records only, with an ACCOUNT column; --json records carry it", async () => {
    const all = await payhook('deliveries', 'list');
    expect(all.stdout.split('\n')[0]).toMatch(/^ID\s+RECEIVED\s+ACCOUNT\s+SOURCE\s+EVENT\s+REFERENCE\s+SIG\s+ANSWER\s+TOOK$/);
    expect(rowsOf(all.stdout).map((l) => l.split(/\s+/)[2])).toEqual(['acct_B', 'acct_B', 'acct_A']);

    const a = await payhook('deliveries', 'list', '--account', 'acct_A');
    expect(a.code).toBe(0);
    expect(rowsOf(a.stdout)).toEqual([
      expect.stringMatching(new RegExp(`^${ofA.id}\\s+\\S+\\s+acct_A\\s+webhook\\s+payment\\.success\\s+ref_shared\\s`)),
    ]);
    const json = await payhook('deliveries', 'list', '--account', 'acct_B', '--reference', 'ref_shared', '--json');
    expect(json.stdout.split('\n').map((l) => JSON.parse(l) as LedgerEntry)).toEqual([
      expect.objectContaining({ id: ofB.id, account: 'acct_B' }),
    ]);
    const dead = await payhook('dead-letters', 'list', '--account', 'acct_B');
    expect(rowsOf(dead.stdout).map((l) => l.split(/\s+/)[2])).toEqual(['acct_B', 'acct_B']);
    expect((await payhook('deliveries', 'list', '--account', 'acct_C')).stdout).toBe('no deliveries match');
  });

  it("shows that account's record, with its account, and answers another's id exactly as a missing one", async () => {
    const shown = await payhook('deliveries', 'show', ofA.id, '--account', 'acct_A');
    expect(shown.stdout).toMatch(/^id: \S+\nreceivedAt: \S+\nsource: webhook\naccount: acct_A\nreference: ref_shared\n/);
    const missing = await refusal('nope', 'deliveries', 'show', 'nope', '--account', 'acct_A');
    expect(missing).toEqual({ kind: 'UsageError', message: 'no delivery ID in the ledger; list them with `payhook deliveries list`.' });
    expect(await refusal(ofB.id, 'deliveries', 'show', ofB.id, '--account', 'acct_A')).toEqual(missing);
    expect(await refusal(ofB.id, 'deliveries', 'show', ofB.id, '--account', 'acct_A', '--json')).toEqual(missing);
  });

  it("replays that account's record, and answers another's id exactly as a missing one, running nothing", async () => {
    const missing = await refusal('nope', 'replay', 'nope', '--account', 'acct_A');
    expect(missing).toEqual({ kind: 'Error', message: expect.stringMatching(/^\[@payhook\/core\] no delivery "ID" in the ledger: /) });
    // The same words as the receiver's own answer for an id it does not hold.
    expect(await refusal('nope', 'replay', 'nope')).toEqual(missing);
    const before = (await store.ledger!.list()).length;
    expect(await refusal(ofB.id, 'replay', ofB.id, '--account', 'acct_A', '--force')).toEqual(missing);
    expect(await store.ledger!.list()).toHaveLength(before);
    // Its own account's: the refused payment is done, so a replay without force is a duplicate.
    const own = await payhook('replay', ofA.id, '--account', 'acct_A');
    expect([own.code, own.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^replayed ${ofA.id} as \\S+: duplicate \\(200\\)$`))]);
    expect(state.runs).toEqual([]);
  });

  it("retries that account's dead letters only, and answers another's id as not a dead letter", async () => {
    state.fixed = true;
    const a = await payhook('dead-letters', 'retry', '--account', 'acct_A');
    expect(a).toEqual({
      code: 0,
      stdout: expect.stringMatching(new RegExp(`^${ofA.id} \\(forced\\) -> \\S+: processed \\(200\\)\n1 of 1 dead letters closed$`)),
    });
    expect(state.runs).toEqual([{ account: 'acct_A', reference: 'ref_shared' }]);
    expect((await payhook('dead-letters', 'retry', '--account', 'acct_A')).stdout).toBe('0 of 0 dead letters closed');
    const other = await refusal(ofB.id, 'dead-letters', 'retry', ofB.id, '--account', 'acct_A');
    expect(other).toEqual({ kind: 'Error', message: expect.stringMatching(/^\[@payhook\/core\] "ID" is not a dead letter in the ledger/) });
    expect(await refusal('nope', 'dead-letters', 'retry', 'nope', '--account', 'acct_A')).toEqual(other);
    expect(state.runs).toHaveLength(1);
    expect((await store.ledger!.list({ deadLetters: 'open' })).map((e) => e.account)).toEqual(['acct_B', 'acct_B']);
  });

  it("erases that account's records only, by reference, email or phone", async () => {
    const ofBBefore = await store.ledger!.list({ account: 'acct_B' });
    // A's refused payment, its replay and its retry: three records of ref_shared and the customer.
    expect(await payhook('deliveries', 'erase', '--email', 'ada@example.com', '--account', 'acct_A', '--json')).toEqual({
      code: 0,
      stdout: '{"erased":3}',
    });
    expect((await payhook('deliveries', 'erase', '--reference', 'ref_shared', '--account', 'acct_A')).stdout).toBe('erased 0 records');
    expect(await store.ledger!.list()).toEqual(ofBBefore);
    expect((await payhook('deliveries', 'erase', '--phone', '251911000111', '--account', 'acct_B')).stdout).toBe('erased 2 records');
    expect(await store.ledger!.list()).toEqual([]);
  });

  it.each(['acct A', '../acct_A', '', 'a'.repeat(65), 'acct_\u0410'])(
    '--account %j is a usage error that says what a name is',
    async (name) => {
      expect(await refusal(name, 'deliveries', 'list', '--account', name)).toEqual({
        kind: 'UsageError',
        message: `--account must be an account's name, 1 to 64 ASCII letters, digits, _ or -; got ${JSON.stringify(name === '' ? '' : 'ID')}.`,
      });
    },
  );
});

describe('the ACCOUNT column of a record written straight into the store', () => {
  it('is escaped as every other printed value is', () => {
    const printed: string[] = [];
    const out = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(String(line)));
    const forged = {
      id: 'x1',
      receivedAt: 0,
      source: 'webhook',
      account: 'acct\x1b[2J\u202eB\r\nrow',
      outcome: 'processed',
      status: 200,
      durationMs: 1,
      signature: 'valid',
    } as LedgerEntry;
    try {
      printList([forged], { empty: '' });
      printList([forged], { empty: '', json: true });
    } finally {
      out.mockRestore();
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters the CLI must escape
    expect(printed.join('\n')).not.toMatch(/[\x1b\r\u202e]/);
    expect(printed[1]).toContain('acct\\x1b[2J\\u202eB\\x0d\\x0arow');
    expect(JSON.parse(printed.at(-1)!)).toMatchObject({ account: forged.account });
  });
});

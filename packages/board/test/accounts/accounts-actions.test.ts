import { describe, expect, it } from 'vitest';
import { requirePostgres } from '@payhook/test-support/services';
import { BASE, eventBody } from '@payhook/test-support/apps/board-app';
import { browserOf, madeUpLike, platformApps, type PlatformApp, type StoreKind } from '@payhook/test-support/apps/platform-app';

// Issue 50's hostile input: staff of account A acting on B's deliveries through the board.
const start = platformApps();
const databaseUrl = await requirePostgres();
const KINDS: StoreKind[] = databaseUrl ? ['memory', 'postgres'] : ['memory'];

/** Each account: a processed payment and a dead letter, under the same references in both. */
async function seedBoth(app: PlatformApp) {
  for (const account of ['acct_A', 'acct_B']) {
    app.refused.add(`${account}:ref_dead`);
    await app.deliver(account, eventBody('ref_same'));
    await app.deliver(account, eventBody('ref_dead'));
  }
  const ledger = app.receiver.store.ledger!;
  const [bDead] = await ledger.list({ account: 'acct_B', deadLetters: 'open' });
  const [bSame] = await ledger.list({ account: 'acct_B', reference: 'ref_same' });
  return { bDead: bDead!.id, bSame: bSame!.id };
}
const boardLines = (app: PlatformApp) => app.audit.filter((l) => l.fields.board !== undefined);
/** An audit line of an action done: neither a refusal nor a failure (a warning like them: these boards have no `audit` hook). */
const done = (l: { fields: { board?: Record<string, unknown> } }) => l.fields.board!.refused === undefined && !('err' in l.fields);

describe.each(KINDS)('actions on a platform’s board, on a %s ledger', (kind) => {
  it("answers A's staff posting B's ids as ids that never were, and nothing of B's changes", async () => {
    const app = await start({ kind, databaseUrl });
    const { bDead, bSame } = await seedBoth(app);
    const ledger = app.receiver.store.ledger!;
    const bBefore = await ledger.list({ account: 'acct_B' });
    const total = (await ledger.list({})).length;
    const ann = await browserOf(app, 'ann');
    app.refused.clear(); // a retry that got through would close B's dead letter
    for (const [action, id] of [
      ['replay', bSame],
      ['force', bSame],
      ['retry', bDead],
    ] as const) {
      const foreign = await ann.post(action, { id });
      const none = await ann.post(action, { id: madeUpLike(id) });
      expect([action, foreign.status, none.status]).toEqual([action, 404, 404]);
      expect((await foreign.text()).replaceAll(id, 'ID')).toBe((await none.text()).replaceAll(madeUpLike(id), 'ID'));
    }
    expect(await ledger.list({ account: 'acct_B' })).toEqual(bBefore);
    expect(await ledger.list({})).toHaveLength(total);
    expect(await ledger.list({ account: 'acct_B', deadLetters: 'open' })).toHaveLength(1);
    // Each refusal is logged with who tried, as a warning; no action's audit line.
    const lines = boardLines(app).filter((l) => l.fields.board!.refused === 'no such delivery');
    expect(lines).toHaveLength(6);
    expect(lines.every((l) => l.level === 'warn' && l.fields.board!.account === 'acct_A')).toBe(true);
    expect(lines[0]!.message).toContain('ann@merchant-a.example (account acct_A): replay of');
    expect(boardLines(app).filter(done)).toEqual([]);
  });

  it("erases and retries A's records only: B's equal reference, customer and dead letter stay whole", async () => {
    const app = await start({ kind, databaseUrl });
    await seedBoth(app);
    const ledger = app.receiver.store.ledger!;
    const bBefore = await ledger.list({ account: 'acct_B' });
    const ann = await browserOf(app, 'ann');
    // A form that names B's account is held to A's all the same.
    const erase = await ann.post('erase', { reference: 'ref_same', account: 'acct_B' });
    expect(erase.headers.get('location')).toBe(`${BASE}?erased=1`);
    expect(await app.idsOf('acct_A', { reference: 'ref_same' })).toEqual([]);

    app.refused.clear(); // both merchants fixed their order systems; only A retries
    const retry = await ann.post('retry-all', {});
    expect(retry.headers.get('location')).toBe(`${BASE}?dead=open&retried=1&closed=1&processed=1`);
    expect(await ledger.list({ account: 'acct_A', deadLetters: 'open' })).toEqual([]);

    // Every body names the same customer: A's records go, B's stay.
    const aLeft = (await app.idsOf('acct_A')).length;
    expect(aLeft).toBe(2); // the dead letter and its replay
    const customer = await ann.post('erase-customer', { email: 'abebe@example.com' });
    expect(customer.headers.get('location')).toBe(`${BASE}?erased=${aLeft}`);
    expect(await app.idsOf('acct_A')).toEqual([]);
    expect(await ledger.list({ account: 'acct_B' })).toEqual(bBefore);

    const lines = boardLines(app).filter(done);
    expect(lines.map((l) => [l.fields.board!.action, l.fields.board!.account, l.fields.board!.scope])).toEqual([
      ['erase', 'acct_A', 'acct_A'],
      ['retry-all', 'acct_A', 'acct_A'],
      ['erase-customer', 'acct_A', 'acct_A'],
    ]);
    expect(lines.every((l) => l.message.startsWith('[@payhook/board] ann@merchant-a.example (account acct_A): '))).toBe(true);
  });

  it("lets the platform's staff act on any account, held to the account the page names", async () => {
    const app = await start({ kind, databaseUrl });
    const { bSame } = await seedBoth(app);
    const ledger = app.receiver.store.ledger!;
    const pat = await browserOf(app, 'pat');
    const [aSame] = await app.idsOf('acct_A', { reference: 'ref_same' });
    const confirm = await pat.get(`${BASE}/confirm?action=erase&id=${aSame}&reference=ref_same&account=acct_A`);
    expect(confirm.text).toContain(
      'Erase: payment <code class="value">ref_same</code> of account <code>acct_A</code>, order <code class="value">order-ref_same</code>, 150.00 ETB?',
    );
    expect(confirm.text).toContain('<input type="hidden" name="account" value="acct_A">');
    const erase = await pat.post('erase', { reference: 'ref_same', account: 'acct_A' });
    expect(erase.headers.get('location')).toBe(`${BASE}?account=acct_A&erased=1`);
    expect((await ledger.list({ reference: 'ref_same' })).map((e) => e.account)).toEqual(['acct_B']);
    // Without an account, "every account" is what the confirmation says, and what happens.
    expect((await pat.get(`${BASE}/confirm?action=retry-all`)).text).toContain('every open dead letter in every account?');

    const replay = await pat.post('force', { id: bSame });
    expect(replay.status).toBe(303);
    const [newest] = await ledger.list({});
    expect([newest!.replayOf, newest!.account, newest!.forced]).toEqual([bSame, 'acct_B', true]);
    const line = boardLines(app).find((l) => l.fields.board!.action === 'force')!;
    expect(line.fields.board).toMatchObject({ user: 'pat@platform.example', scope: 'acct_B' });
    expect(line.fields.board!.account).toBeUndefined();
  });
});

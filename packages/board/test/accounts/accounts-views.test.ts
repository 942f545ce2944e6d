import { describe, expect, it } from 'vitest';
import { requirePostgres } from '@payhook/test-support/services';
import { BASE } from '@payhook/test-support/apps/board-app';
import { browserOf, madeUpLike, platformApps, rowsOf, seed, type StoreKind } from '@payhook/test-support/apps/platform-app';

// Issue 50: a merchant's staff see their own account on the board, the platform's staff see every account.
const start = platformApps();
const databaseUrl = await requirePostgres();
const KINDS: StoreKind[] = databaseUrl ? ['memory', 'postgres'] : ['memory'];

const next = (page: string) => /rel="next" href="([^"]+)"/.exec(page)?.[1]?.replaceAll('&amp;', '&');
const ids = (page: string) => rowsOf(page).map((r) => r.id);

describe.each(KINDS)('the board of a platform, on a %s ledger', (kind) => {
  it("shows A's staff A's records only: each page full of them, the filters within them, another account in the query ignored", async () => {
    const app = await start({ kind, databaseUrl, board: { pageSize: 2 } });
    const { a, b } = await seed(app);
    expect([a.length, b.length]).toEqual([3, 4]);
    const ann = await browserOf(app, 'ann');
    const first = await ann.get(`${BASE}/`);
    expect(first.status).toBe(200);
    expect(ids(first.text)).toEqual(a.slice(0, 2));
    const second = await ann.get(next(first.text)!);
    expect(ids(second.text)).toEqual([a[2]]);
    expect(next(second.text)).toBeUndefined();
    // The equal reference and merchant reference: A's one record, never B's.
    expect(ids((await ann.get(`${BASE}/?reference=ref_same`)).text)).toEqual([a[2]]);
    expect(ids((await ann.get(`${BASE}/?merchant=order-same`)).text)).toEqual([a[2]]);
    // Another account named in the query string is not a filter for A's staff: their own rows still.
    const named = await ann.get(`${BASE}/?account=acct_B`);
    expect(ids(named.text)).toEqual(a.slice(0, 2));
    for (const text of [first.text, second.text, named.text]) for (const id of b) expect(text).not.toContain(id);
    expect(first.text).toContain('ann@merchant-a.example · account <span id="account">acct_A</span>');
    // No Account column and no account filter: there is one account to see.
    expect(first.text).not.toMatch(/<th scope="col">Account<\/th>|name="account"/);
  });

  it("shows the platform's staff every account's records, each with its account, and filters by account", async () => {
    const app = await start({ kind, databaseUrl, board: { pageSize: 3 } });
    const { a, b } = await seed(app);
    const pat = await browserOf(app, 'pat');
    const all = await app.receiver.store.ledger!.list({});
    const first = await pat.get(`${BASE}/`);
    expect(first.text).toContain('<th scope="col">Account</th>');
    expect(rowsOf(first.text)).toEqual(all.slice(0, 3).map((e) => ({ id: e.id, account: e.account })));
    expect(rowsOf(first.text).map((r) => r.account)).toEqual(['acct_A', 'acct_B', 'acct_B']);
    const onlyB = await pat.get(`${BASE}/?account=acct_B`);
    expect(ids(onlyB.text)).toEqual(b.slice(0, 3));
    expect(onlyB.text).toContain('<input name="account" value="acct_B"');
    // Its pages stay within the account.
    expect(ids((await pat.get(next(onlyB.text)!)).text)).toEqual([b[3]]);
    expect(ids((await pat.get(`${BASE}/?account=acct_A&reference=ref_same`)).text)).toEqual([a[2]]);
    expect(rowsOf((await pat.get(`${BASE}/?reference=ref_same`)).text).map((r) => r.account)).toEqual(['acct_B', 'acct_A']);
  });

  it("answers B's delivery to A's staff exactly as an id that never was, and shows A's own with A's attempts only", async () => {
    const app = await start({ kind, databaseUrl });
    const { a, b } = await seed(app);
    const [bSame, aSame] = [b.at(-1)!, a.at(-1)!];
    const madeUp = madeUpLike(bSame);
    expect(await app.receiver.store.ledger!.get(madeUp)).toBeUndefined();
    const ann = await browserOf(app, 'ann');
    for (const path of ['/deliveries/ID', '/confirm?action=replay&id=ID', '/confirm?action=retry&id=ID']) {
      const foreign = await ann.get(`${BASE}${path.replace('ID', bSame)}`);
      const none = await ann.get(`${BASE}${path.replace('ID', madeUp)}`);
      expect([path, foreign.status]).toEqual([path, 404]);
      expect(foreign.text.replaceAll(bSame, 'ID')).toBe(none.text.replaceAll(madeUp, 'ID'));
      expect(foreign.text).not.toContain('acct_B');
    }
    // B's own staff see it.
    const bob = await browserOf(app, 'bob');
    expect((await bob.get(`${BASE}/deliveries/${bSame}`)).status).toBe(200);
    expect((await bob.get(`${BASE}/deliveries/${aSame}`)).status).toBe(404);

    const own = await ann.get(`${BASE}/deliveries/${aSame}`);
    expect(own.status).toBe(200);
    const timeline = (text: string) => /<ol class="timeline" id="timeline">([\s\S]*?)<\/ol>/.exec(text)![1]!;
    expect(timeline(own.text).match(/<li/g)).toHaveLength(1);
    expect(own.text).not.toContain(bSame);
    expect(own.text).toContain('<dt>Account</dt><dd>acct_A</dd>');
    // The platform's staff: the equal reference of B is another payment, not one of this one's attempts.
    const pat = await browserOf(app, 'pat');
    const seen = await pat.get(`${BASE}/deliveries/${aSame}`);
    expect(timeline(seen.text).match(/<li/g)).toHaveLength(1);
    expect(seen.text).not.toContain(bSame);
    expect(seen.text).toContain(`action=erase&amp;id=${aSame}&amp;reference=ref_same&amp;account=acct_A`);
    expect((await pat.get(`${BASE}/deliveries/${bSame}`)).text).toContain('<dt>Account</dt><dd>acct_B</dd>');
  });

  it("counts A's deliveries only in A's chart; every account's, or one's, in the platform's", async () => {
    const app = await start({ kind, databaseUrl });
    await seed(app);
    const count = async (viewer: string, query = '') => {
      const r = await fetch(`${app.origin}${BASE}/chart.svg${query}`, { headers: { 'x-viewer': viewer } });
      expect(r.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
      return Number(/<title>(\d+) deliveries in the last hour/.exec(await r.text())![1]);
    };
    expect(await count('ann')).toBe(3);
    expect(await count('ann', '?account=acct_B')).toBe(3);
    expect(await count('bob')).toBe(4);
    expect(await count('pat')).toBe(7);
    expect(await count('pat', '?account=acct_B')).toBe(4);
    expect(await count('pat', '?account=acct_A&reference=ref_same')).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { BASE, boardApps, eventBody } from '@payhook/test-support/apps/board-app';
import { browserOf, platformApps, type PlatformApp } from '@payhook/test-support/apps/platform-app';
import { openLive } from '../sse.js';

// The live stream of a platform's board (intervalMs 20): each viewer's own account's rows, as they arrive.
const start = platformApps();
const startSingle = boardApps();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The open list's live stream for a viewer, from the URL their page names. */
async function liveOf(app: PlatformApp, viewer: string, query = '') {
  const page = await (await browserOf(app, viewer)).get(`${BASE}/${query}`);
  const url = /data-live="([^"]+)"/.exec(page.text)![1]!.replaceAll('&amp;', '&');
  return openLive(`${app.origin}${url}`, { 'x-viewer': viewer });
}

describe('the live stream of a platform', () => {
  it("sends A's staff A's new rows only while B's arrive; the platform's staff get both, each with its account", async () => {
    const app = await start();
    await app.deliver('acct_B', eventBody('ref_before'));
    const ann = await liveOf(app, 'ann');
    const pat = await liveOf(app, 'pat');
    const onlyB = await liveOf(app, 'pat', '?account=acct_B');
    expect([ann.status, pat.status, onlyB.status]).toEqual([200, 200, 200]);
    // B's first, then A's: once A's row is sent, every look since has seen B's too (the look-back covers them).
    for (const [account, reference] of [
      ['acct_B', 'ref_same'],
      ['acct_B', 'ref_b1'],
      ['acct_A', 'ref_same'],
      ['acct_B', 'ref_b2'],
      ['acct_A', 'ref_a1'],
    ] as const)
      await app.deliver(account, eventBody(reference));
    await ann.until(2);
    await pat.until(5);
    await onlyB.until(3);
    await pause(150); // several more looks: nothing else comes
    const a = await app.idsOf('acct_A');
    expect(ann.events.map((e) => [e.id, e.data.account, e.data.reference])).toEqual([
      [a[1], 'acct_A', 'ref_same'],
      [a[0], 'acct_A', 'ref_a1'],
    ]);
    expect(pat.events.map((e) => e.data.account)).toEqual(['acct_B', 'acct_B', 'acct_A', 'acct_B', 'acct_A']);
    expect(onlyB.events.map((e) => e.data.reference)).toEqual(['ref_same', 'ref_b1', 'ref_b2']);
    for (const s of [ann, pat, onlyB]) s.close();
  });

  it("looks back over the last seconds for A's staff through A's records only, whatever account the URL names", async () => {
    const app = await start();
    await app.deliver('acct_A', eventBody('ref_a1'));
    await app.deliver('acct_B', eventBody('ref_b1'));
    await app.deliver('acct_B', eventBody('ref_b2'));
    // No `after`: a stream the browser reopened without a page behind it looks back.
    const ann = await openLive(`${app.origin}${BASE}/live?account=acct_B`, { 'x-viewer': 'ann' });
    await app.deliver('acct_A', eventBody('ref_a2'));
    await ann.until(2);
    await pause(150);
    expect(ann.events.map((e) => [e.data.account, e.data.reference])).toEqual([
      ['acct_A', 'ref_a1'],
      ['acct_A', 'ref_a2'],
    ]);
    ann.close();
  });
});

describe('hostile account names in the platform view', () => {
  const HOSTILE = { dots: '..', huge: 'x'.repeat(10_240), markup: '<script>alert(1)</script>', slash: 'acct_A/../acct_B' };

  it.each(Object.entries(HOSTILE))('%s: refused with a notice, escaped, and the page still lists every row', async (_, value) => {
    const app = await start();
    await app.deliver('acct_A', eventBody('ref_a1'));
    await app.deliver('acct_B', eventBody('ref_b1'));
    const pat = await browserOf(app, 'pat');
    const q = `account=${encodeURIComponent(value)}`;
    const page = await pat.get(`${BASE}/?${q}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<p class="notice error" role="alert">&quot;[^<]{1,70}&quot; is not an account name/);
    expect(page.text).not.toContain('<script>alert');
    expect(page.text).not.toContain('x'.repeat(129));
    expect(page.text).toContain('</table>');
    expect([...page.text.matchAll(/<tr data-id=/g)]).toHaveLength(2);
    for (const path of [`/chart.svg?${q}`, `/live?${q}`]) {
      const r = await fetch(`${app.origin}${BASE}${path}`, { headers: { 'x-viewer': 'pat' } });
      expect([path, r.status]).toEqual([path, 200]);
      await r.body?.cancel();
    }
    // An action held to such an account is refused (a 10 KB form is no form of the board's: 413), and erases nothing.
    const confirm = await pat.get(`${BASE}/confirm?action=retry-all&${q}`);
    expect(confirm.status).toBe(400);
    expect(confirm.text).not.toContain('<script>alert');
    const post = await pat.post('erase-customer', { email: 'abebe@example.com', account: value });
    expect(post.status).toBe(value.length > 4096 ? 413 : 400);
    expect(await app.receiver.store.ledger!.list({})).toHaveLength(2);
  });
});

describe("what authorize may answer about the viewer's account", () => {
  const answers: Record<string, unknown> = {
    empty: { user: 'u', account: '' },
    dots: { user: 'u', account: '../acct_A' },
    long: { user: 'u', account: 'a'.repeat(65) },
    spaced: { user: 'u', account: 'acct_A ' },
    lookalike: { user: 'u', account: '\u0430cct_A' },
    number: { user: 'u', account: 42 },
    null: { user: 'u', account: null },
    absent: { user: 'u' },
    undefined: { user: 'u', account: undefined },
  };
  const app = () => start({ board: { authorize: (request) => answers[request.headers.get('x-answer')!] as never } });

  it.each(['empty', 'dots', 'long', 'spaced', 'lookalike', 'number', 'null'])(
    'account %s is the app’s bug: 500, logged, and no record shown',
    async (name) => {
      const { origin, deliver, audit } = await app();
      await deliver('acct_A', eventBody('ref_a1'));
      const r = await fetch(`${origin}${BASE}/`, { headers: { 'x-answer': name } });
      expect([r.status, await r.text()]).toEqual([500, 'The board failed; the receiver’s log says why.\n']);
      const line = audit.find((l) => l.level === 'error')!;
      expect(line.message).toMatch(/\[@payhook\/board\] authorize answered \{ user, account: .* \}: account must be the account's name/);
    },
  );

  it('the log says what authorize answered, quoted and cut to 80 characters, so that the app’s bug can be found', async () => {
    const shown: Record<string, unknown> = {
      '"../acct_A"': { user: 'u', account: '../acct_A' },
      [`"${'y'.repeat(80)}"`]: { user: 'u', account: 'y'.repeat(200) },
      '""': { user: 'u', account: '' },
      '42': { user: 'u', account: 42 },
      null: { user: 'u', account: null },
    };
    const { origin, audit } = await start({ board: { authorize: (request) => shown[request.headers.get('x-answer')!] as never } });
    for (const name of Object.keys(shown)) {
      const r = await fetch(`${origin}${BASE}/`, { headers: { 'x-answer': name } });
      expect([name, r.status]).toEqual([name, 500]);
      expect([name, audit.filter((l) => l.level === 'error').at(-1)!.message]).toEqual([
        name,
        `[@payhook/board] a board request failed: TypeError: [@payhook/board] authorize answered { user, account: ${name} }: account must be the account's name (1 to 64 letters, digits, _ or -), as the receiver's accounts.resolve knows it; leave it out only for the platform's own staff, who see every account.`,
      ]);
    }
  });

  it('an account on a receiver that serves one account is the app’s bug too: 500, logged', async () => {
    const { origin, audit } = await startSingle({ authorize: () => ({ user: 'u', account: 'acct_A' }) });
    expect((await fetch(`${origin}${BASE}/`)).status).toBe(500);
    expect(audit.find((l) => l.level === 'error')!.message).toMatch(
      /authorize answered account acct_A, but the receiver serves one account/,
    );
  });

  it('account absent and account undefined are the same: the platform view', async () => {
    const { origin, deliver } = await app();
    await deliver('acct_A', eventBody('ref_a1'));
    await deliver('acct_B', eventBody('ref_b1'));
    const pages = await Promise.all(
      ['absent', 'undefined'].map(async (name) => (await fetch(`${origin}${BASE}/`, { headers: { 'x-answer': name } })).text()),
    );
    expect(pages[0]).toBe(pages[1]);
    expect([...pages[0]!.matchAll(/<td class="account" data-label="Account">(acct_\w)<\/td>/g)].map((m) => m[1])).toEqual([
      'acct_B',
      'acct_A',
    ]);
  });
});

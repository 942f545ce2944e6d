// Each action on a single-account board as its viewer sees it and as the log keeps it: the
// confirmation's words and its one form, what the post does to the ledger, where it sends the
// browser, the audit line, and what a failure says. (Accounts: accounts-actions.test.ts.)
import { describe, expect, it } from 'vitest';
import { BASE, boardApps, boardBrowser, eventBody, type AuditLine } from '@payhook/test-support/apps/board-app';

const start = boardApps();
type App = Awaited<ReturnType<typeof start>>;

/** The page's main part, and its title. */
const mainOf = (text: string) => /<main id="main">([\s\S]*)<\/main>/.exec(text)![1]!;
const titleOf = (text: string) => /<title>([^<]*)<\/title>/.exec(text)![1]!;
const boardLines = (audit: AuditLine[]) => audit.filter((l) => l.fields.board !== undefined);

const browser = (app: App) => boardBrowser(app.origin);

describe('a confirmation', () => {
  it('says what the action will do, and holds the one form that does it: its fields, its button, and the way back', async () => {
    const app = await start();
    await app.deliver(eventBody('ref_one'));
    const [entry] = await app.receiver.store.ledger!.list({});
    const id = entry!.id;
    const { token, get } = await browser(app);
    // The payment is named (issue 51): its reference, order id and amount; the delivery below.
    const named = 'payment <code class="value">ref_one</code>, order <code class="value">order-ref_one</code>, 150.00 ETB';
    const received = new Date(entry!.receivedAt)
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC');
    const processed = /<span class="outcome good" title="[^"]*">processed<\/span>/.exec(mainOf((await get(`/deliveries/${id}`)).text))![0];
    const subject = `<dl class="facts" id="subject"><dt>Delivery</dt><dd><code class="value">${id}</code>, received ${received}</dd><dt>Customer</dt><dd class="value">abebe@example.com</dd><dt>Outcome</dt><dd>${processed} (200)</dd></dl>`;
    const form = (action: string, fields: string, button: string, back: string) =>
      `<form method="post" action="${BASE}/actions/${action}" class="actions">\n<input type="hidden" name="csrf" value="${token}">${fields}\n${button} <a href="${back}">Cancel</a>\n</form>`;
    const cases: Array<[string, string, string]> = [
      [
        `/confirm?action=replay&id=${id}`,
        'Replay?',
        `<h2>Replay: ${named}?</h2>${subject}<p>Run this delivery again through the receiver. A done event answers duplicate and runs nothing.</p>\n${form('replay', `<input type="hidden" name="id" value="${id}">`, '<button type="submit" class="primary">Replay</button>', `${BASE}/deliveries/${id}`)}`,
      ],
      [
        `/confirm?action=force&id=${id}`,
        'Force replay?',
        `<h2>Force replay: ${named}?</h2>${subject}<p>Run this event&#39;s handlers again even though it is done, under a key of the replay&#39;s own. It is recorded as forced.</p>\n${form('force', `<input type="hidden" name="id" value="${id}">`, '<button type="submit" class="danger">Force replay</button>', `${BASE}/deliveries/${id}`)}`,
      ],
      [
        `/confirm?action=retry&id=${id}`,
        'Retry?',
        `<h2>Retry: ${named}?</h2>${subject}<p>Retry this dead letter: replayed, forced only when its event was rejected. It closes when the replay settles.</p>\n${form('retry', `<input type="hidden" name="id" value="${id}">`, '<button type="submit" class="primary">Retry</button>', `${BASE}/deliveries/${id}`)}`,
      ],
      [
        '/confirm?action=retry-all',
        'Retry all?',
        `<h2>Retry all: every open dead letter?</h2><p>Retry every open dead letter, oldest first, as a single retry does.</p>\n${form('retry-all', '', '<button type="submit" class="primary">Retry all</button>', `${BASE}?dead=open`)}`,
      ],
      [
        `/confirm?action=erase&id=${id}&reference=ref_one`,
        'Erase?',
        `<h2>Erase: ${named}?</h2><p>Delete every ledger record of this payment, open dead letters too. This cannot be undone.</p>\n${form('erase', `<input type="hidden" name="id" value="${id}"><input type="hidden" name="reference" value="ref_one">`, '<button type="submit" class="danger">Erase</button>', `${BASE}?reference=ref_one`)}`,
      ],
      [
        '/confirm?action=erase-customer&email=%20ada%40example.com%20&phone=0911',
        'Erase?',
        `<h2>Erase: customer <code class="value">ada@example.com</code>?</h2><p>Delete every ledger record whose kept body names this customer (email, case aside; or phone, digits only), open dead letters too. Reads the whole ledger. This cannot be undone.</p>\n${form('erase-customer', '<input type="hidden" name="email" value="ada@example.com">', '<button type="submit" class="danger">Erase</button>', BASE)}`,
      ],
      [
        '/confirm?action=erase-customer&email=%20&phone=%20%2B251%20911%20',
        'Erase?',
        `<h2>Erase: customer <code class="value">+251 911</code>?</h2><p>Delete every ledger record whose kept body names this customer (email, case aside; or phone, digits only), open dead letters too. Reads the whole ledger. This cannot be undone.</p>\n${form('erase-customer', '<input type="hidden" name="phone" value="+251 911">', '<button type="submit" class="danger">Erase</button>', BASE)}`,
      ],
    ];
    for (const [path, title, main] of cases) {
      const page = await get(path);
      expect([path, page.status, titleOf(page.text), mainOf(page.text)]).toEqual([path, 200, `${title} · payhook`, main]);
    }
  });

  it('without what the action needs, says what is missing (400) and holds no form', async () => {
    const app = await start();
    const { get } = await browser(app);
    const cases: Array<[string, string]> = [
      ['/confirm?action=replay', 'Replay needs a delivery'],
      ['/confirm?action=force&id=', 'Force replay needs a delivery'],
      ['/confirm?action=retry&reference=ref_x', 'Retry needs a delivery'],
      ['/confirm?action=erase&id=x', 'Erase needs a reference'],
      ['/confirm?action=erase-customer&email=%20&phone=%20', 'Erase needs an email or a phone'],
    ];
    for (const [path, what] of cases) {
      const page = await get(path);
      expect([path, page.status, titleOf(page.text), mainOf(page.text)]).toEqual([
        path,
        400,
        'Nothing to act on · payhook',
        `<h2>Nothing to act on</h2><p class="notice error" role="alert">${what}: start from the board&#39;s pages.</p><p><a href="${BASE}">Back to the deliveries</a></p>`,
      ]);
    }
    // A delivery that is not in the ledger: the same page as anywhere else for an id that never was.
    const none = await get('/confirm?action=replay&id=0000000000a-none');
    expect([
      none.status,
      none.text.includes('There is no delivery 0000000000a-none in the ledger'),
      none.text.includes('name="csrf"'),
    ]).toEqual([404, true, false]);
  });
});

describe('an action done', () => {
  it('replays and forces a replay: the new record, the browser sent to it with what it answered, and an audit line each', async () => {
    const app = await start();
    await app.deliver(eventBody('ref_done'));
    const ledger = app.receiver.store.ledger!;
    const [done] = await ledger.list({});
    const { post, get } = await browser(app);

    const replay = await post('replay', { id: done!.id });
    const [copy] = await ledger.list({});
    expect([replay.status, replay.headers.get('location')]).toEqual([303, `${BASE}/deliveries/${copy!.id}?after=replay`]);
    expect([copy!.replayOf, copy!.outcome, copy!.forced]).toEqual([done!.id, 'duplicate', false]);
    const force = await post('force', { id: done!.id });
    const [forced] = await ledger.list({});
    expect([force.status, force.headers.get('location')]).toEqual([303, `${BASE}/deliveries/${forced!.id}?after=force`]);
    expect([forced!.replayOf, forced!.outcome, forced!.forced]).toEqual([done!.id, 'processed', true]);
    expect((await get(`/deliveries/${forced!.id}?after=force`)).text).toMatch(
      /<p class="notice" role="status">Replayed \(forced\): <span class="outcome good"[^>]*>processed<\/span> \(200\)\.<\/p>/,
    );

    // An action done is a warning when no `audit` hook keeps the trail, so that the default logger shows who did it.
    expect(boardLines(app.audit)).toEqual([
      {
        level: 'warn',
        fields: {
          board: {
            user: 'ada@shop.example',
            account: undefined,
            action: 'replay',
            id: done!.id,
            scope: undefined,
            replay: copy!.id,
            outcome: 'duplicate',
          },
        },
        message: `[@payhook/board] ada@shop.example: replay of ${done!.id}: duplicate (200)`,
      },
      {
        level: 'warn',
        fields: {
          board: {
            user: 'ada@shop.example',
            account: undefined,
            action: 'force',
            id: done!.id,
            scope: undefined,
            replay: forced!.id,
            outcome: 'processed',
          },
        },
        message: `[@payhook/board] ada@shop.example: force replay of ${done!.id}: processed (200)`,
      },
    ]);
  });

  it('retries one dead letter, or every open one oldest first, and says on the list how many it retried and closed', async () => {
    const app = await start();
    const ledger = app.receiver.store.ledger!;
    for (const r of ['ref_d1', 'ref_d2', 'ref_d3']) {
      app.refused.add(r);
      await app.deliver(eventBody(r));
    }
    const [d3, d2, d1] = await ledger.list({ deadLetters: 'open' });
    const { post, get } = await browser(app);

    // Still refused: the dead letter stays open, and its replay went to the dead letters in its place.
    const still = await post('retry', { id: d1!.id });
    const [again] = await ledger.list({ deadLetters: 'open' });
    expect(again!.replayOf).toBe(d1!.id);
    expect([still.status, still.headers.get('location')]).toEqual([303, `${BASE}/deliveries/${d1!.id}?after=retry&replay=${again!.id}`]);
    expect((await get(`/deliveries/${d1!.id}?after=retry&replay=${again!.id}`)).text).toMatch(
      /<p class="notice" role="status">Retried: rejected again, <span class="outcome bad"[^>]*>rejected<\/span> \(200\)\. The dead letter is closed: the replay is a dead letter in its place\. <a href="[^"]+">Open the replay<\/a>\.<\/p>/,
    );
    app.refused.clear();
    const all = await post('retry-all', {});
    // What the replays answered rides along (issue 51), as the receiver reported each.
    const location = `${BASE}?dead=open&retried=3&closed=3&processed=2&duplicate=1`;
    expect([all.status, all.headers.get('location')]).toEqual([303, location]);
    expect(await ledger.list({ deadLetters: 'open' })).toEqual([]);
    expect(mainOf((await get(location.slice(BASE.length))).text)).toContain(
      '<p class="notice" role="status">Retried 3 dead letters: 2 processed, 1 duplicate; 3 closed.</p>',
    );
    expect(mainOf((await get('/?retried=1')).text)).toContain('<p class="notice" role="status">Retried 1 dead letter: 0 closed.</p>');

    const lines = boardLines(app.audit);
    expect(lines[0]).toEqual({
      level: 'warn',
      fields: { board: { user: 'ada@shop.example', account: undefined, action: 'retry', scope: undefined, ids: [d1!.id], closed: 1 } },
      message: '[@payhook/board] ada@shop.example: retried 1 dead letters, 1 closed',
    });
    expect(lines[1]).toEqual({
      level: 'warn',
      fields: {
        board: {
          user: 'ada@shop.example',
          account: undefined,
          action: 'retry-all',
          scope: undefined,
          ids: [d2!.id, d3!.id, again!.id],
          closed: 3,
        },
      },
      message: '[@payhook/board] ada@shop.example: retried 3 dead letters, 3 closed',
    });
  });

  it('erases a payment, or a customer by phone, and the list says how many records went', async () => {
    const app = await start();
    const ledger = app.receiver.store.ledger!;
    await app.deliver(eventBody('ref_pay'));
    await app.deliver(eventBody('ref_pay'));
    await app.deliver(eventBody('ref_phone', { customer: { name: 'Bo', email: 'bo@example.com', phone: '+251 911 000 002' } }));
    const { post, get } = await browser(app);

    const erase = await post('erase', { reference: 'ref_pay' });
    expect([erase.status, erase.headers.get('location')]).toEqual([303, `${BASE}?erased=2`]);
    expect(mainOf((await get('/?erased=2')).text)).toContain('<p class="notice" role="status">Erased 2 records.</p>');
    const phone = await post('erase-customer', { email: '', phone: '+251911000002' });
    expect(phone.headers.get('location')).toBe(`${BASE}?erased=1`);
    expect(mainOf((await get('/?erased=1')).text)).toContain('<p class="notice" role="status">Erased 1 record.</p>');
    expect(await ledger.list({})).toEqual([]);

    expect(boardLines(app.audit)).toEqual([
      {
        level: 'warn',
        fields: {
          board: { user: 'ada@shop.example', account: undefined, action: 'erase', scope: undefined, reference: 'ref_pay', erased: 2 },
        },
        message: '[@payhook/board] ada@shop.example: erased 2 records of reference "ref_pay"',
      },
      {
        level: 'warn',
        fields: {
          board: { user: 'ada@shop.example', account: undefined, action: 'erase-customer', scope: undefined, erased: 1, by: 'phone' },
        },
        message: '[@payhook/board] ada@shop.example: erased 1 records of a customer, by phone',
      },
    ]);
  });

  it('that fails says why when payhook says why (409), keeps a driver’s error in the log, and logs both as warnings', async () => {
    const app = await start();
    const ledger = app.receiver.store.ledger!;
    await app.deliver(eventBody('ref_ok'));
    const [ok] = await ledger.list({});
    const { post } = await browser(app);

    // Not a dead letter: core's own words.
    const retry = await post('retry', { id: ok!.id });
    const said = await retry.text();
    expect([retry.status, titleOf(said)]).toEqual([409, 'Retry did not happen · payhook']);
    expect(mainOf(said)).toContain(
      `<p class="notice error" role="alert">[@payhook/core] &quot;${ok!.id}&quot; is not a dead letter in the ledger; list them with \`payhook dead-letters list\`.</p>`,
    );

    // The ledger's driver failing: its words stay in the log.
    ledger.list = async () => {
      throw new Error('connection reset by peer');
    };
    const erase = await post('erase', { reference: 'ref_ok' });
    const text = await erase.text();
    expect([erase.status, titleOf(text), text.includes('connection reset')]).toEqual([409, 'Erase did not happen · payhook', false]);
    expect(mainOf(text)).toContain('<p class="notice error" role="alert">It failed; the receiver’s log says why.</p>');

    const warnings = boardLines(app.audit).filter((l) => l.level === 'warn');
    expect(warnings.map((l) => [l.fields.board, l.message])).toEqual([
      [
        { user: 'ada@shop.example', account: undefined, action: 'retry', id: ok!.id, reference: '' },
        `[@payhook/board] ada@shop.example: retry failed: [@payhook/core] "${ok!.id}" is not a dead letter in the ledger; list them with \`payhook dead-letters list\`.`,
      ],
      [
        { user: 'ada@shop.example', account: undefined, action: 'erase', id: '', reference: 'ref_ok' },
        '[@payhook/board] ada@shop.example: erase failed: connection reset by peer',
      ],
    ]);
    expect((warnings[1]!.fields as { err?: Error }).err?.message).toBe('connection reset by peer');
    // No line of an action done: each done one is a warning too (no `audit` hook here), with neither `refused` nor `err`.
    expect(boardLines(app.audit).filter((l) => l.fields.board!.refused === undefined && !('err' in l.fields))).toEqual([]);
  });
});

// authorize over every route the board serves. The routes are the router's own table (src/routes.ts),
// so a page, asset, image, stream or action added there is asked here the day it is added.
import { describe, expect, it } from 'vitest';
import type { Authorization } from '@payhook/board';
import { ACTIONS } from '../src/actions.js';
import { SCRIPT, STYLE } from '../src/assets.js';
import { SECURITY_HEADERS } from '../src/base/guard.js';
import { ROUTES } from '../src/routes.js';
import { BASE, boardApps, eventBody, getPage } from '@payhook/test-support/apps/board-app';

const start = boardApps();
const TOKEN = `${'A'.repeat(42)}b`;

/** Every request the table says the board serves: GET routes as GET and HEAD, actions as a post the board's page would send. */
const requests = (origin: string) =>
  ROUTES.flatMap((route) =>
    route.examples.flatMap((example) =>
      (route.method === 'GET' ? ['GET', 'HEAD'] : ['POST']).map((method) => ({
        name: `${route.kind} ${method} ${example}`,
        request: () =>
          new Request(`${origin}${BASE}${example}`, {
            method,
            headers: {
              cookie: `payhook_board=${TOKEN}`,
              origin,
              'sec-fetch-site': 'same-origin',
              ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
            },
            body: method === 'POST' ? new URLSearchParams({ csrf: TOKEN, reference: 'ref_kept' }) : undefined,
          }),
      })),
    ),
  );

/** What no route serves: authorize is asked before the board says 404 or 405. */
const unrouted = (origin: string) =>
  [
    ['GET', '/nope'],
    ['PUT', '/'],
    ['POST', '/actions/nope'],
    ['GET', '/actions/erase'],
  ].map(([method, path]) => ({ name: `${method} ${path}`, request: () => new Request(`${origin}${BASE}${path}`, { method }) }));

describe('the route table', () => {
  it('names a page, an asset, an image, a stream and every action, and each example reaches its own route', () => {
    expect(new Set(ROUTES.map((r) => r.kind))).toEqual(new Set(['page', 'asset', 'image', 'stream', 'action']));
    const examples = ROUTES.flatMap((r) => r.examples);
    for (const action of Object.keys(ACTIONS))
      expect(examples).toEqual(expect.arrayContaining([`/actions/${action}`, `/confirm?action=${action}`]));
    for (const route of ROUTES) {
      expect(route.examples.length).toBeGreaterThan(0);
      for (const example of route.examples) {
        const path = new URL(example, 'http://x').pathname;
        expect([example, ROUTES.find((r) => r.method === route.method && r.path.test(path))]).toEqual([example, route]);
      }
    }
  });
});

describe('authorize, over every route', () => {
  const noes: Array<[string, unknown]> = [
    ['false', false],
    ['null', null],
    ['undefined', undefined],
    ['no user', {}],
    ['a user that is no string', { user: 42 }],
  ];

  it.each(noes)('answering %s: 401 on every route, asked once each, and nothing of the ledger or a cookie in the answer', async (_, no) => {
    let asked = 0;
    const app = await start({ authorize: () => (asked++, no as Authorization) });
    await app.deliver(eventBody('ref_kept'));
    const all = [...requests(app.origin), ...unrouted(app.origin)];
    for (const { name, request } of all) {
      const r = await app.board.fetch(request());
      expect([name, r.status, await r.text()]).toEqual([name, 401, 'Sign in to see the board.\n']);
      expect([name, r.headers.get('content-type'), r.headers.getSetCookie()]).toEqual([name, 'text/plain; charset=utf-8', []]);
    }
    expect(asked).toBe(all.length);
    expect(await app.receiver.store.ledger!.list({ reference: 'ref_kept' })).toHaveLength(1);
  });

  it('answering a Response: that very Response on every route', async () => {
    const given: Response[] = [];
    const app = await start({ authorize: () => given[given.push(Response.redirect('http://127.0.0.1/login', 302)) - 1]! });
    const all = [...requests(app.origin), ...unrouted(app.origin)];
    for (const [i, { name, request }] of all.entries()) {
      const r = await app.board.fetch(request());
      expect([name, r === given[i], r.status, r.headers.get('location')]).toEqual([name, true, 302, 'http://127.0.0.1/login']);
    }
    expect(given).toHaveLength(all.length);
  });

  it('answering a viewer: every route serves its own answer, not 401', async () => {
    const app = await start();
    for (const { name, request } of [...requests(app.origin), ...unrouted(app.origin)]) {
      const r = await app.board.fetch(request());
      await r.body?.cancel(); // the live stream's too
      expect([name, r.status]).not.toEqual([name, 401]);
    }
  });
});

describe('the name a request was sent to, over every route', () => {
  it('not one of `hosts`: 421 on every route, before authorize, with nothing of the ledger, and nothing done', async () => {
    let asked = 0;
    const app = await start({ hosts: ['pay.example.com'], authorize: () => (asked++, { user: 'ada@shop.example' }) });
    await app.deliver(eventBody('ref_kept'));
    for (const { name, request } of [...requests(app.origin), ...unrouted(app.origin)]) {
      const sent = request();
      sent.headers.set('host', 'evil.example');
      const r = await app.board.fetch(sent);
      expect([name, r.status, await r.text(), r.headers.getSetCookie()]).toEqual([
        name,
        421,
        'This board is not served under this name.\n',
        [],
      ]);
    }
    expect(asked).toBe(0);
    expect(await app.receiver.store.ledger!.list({ reference: 'ref_kept' })).toHaveLength(1);
  });
});

describe('what no route serves', () => {
  /** A post the board's own page would send, token and all: were it routed to an action, it would act. */
  const post = (origin: string, path: string) =>
    new Request(`${origin}${BASE}${path}`, {
      method: 'POST',
      headers: {
        cookie: `payhook_board=${TOKEN}`,
        origin,
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: TOKEN, reference: 'ref_kept' }),
    });

  it('a path that only looks like a page is 404, the board’s own page with its headers', async () => {
    const app = await start();
    const misses = [
      '/x/',
      '/x',
      '/assets/board.cssx',
      '/x/assets/board.css',
      '/assets/board.jsx',
      '/x/assets/board.js',
      '/chart.svgx',
      '/x/chart.svg',
      '/livex',
      '/x/live',
      '/deliveries/a/b',
      '/x/deliveries/a',
      '/deliveries/',
      '/confirmx?action=erase&reference=r',
      '/x/confirm?action=erase&reference=r',
      '/confirm',
      '/confirm?action=nope',
      '/confirm?action=constructor',
      '/actions/erase',
    ];
    for (const path of misses) {
      const r = await app.board.fetch(new Request(`${app.origin}${BASE}${path}`));
      const text = await r.text();
      expect([
        path,
        r.status,
        r.headers.get('content-type'),
        /<h2>Not found<\/h2><p class="notice error" role="alert">([^<]*)</.exec(text)?.[1],
      ]).toEqual([path, 404, 'text/html; charset=utf-8', 'The board has no such page.']);
      expect([path, r.headers.get('content-security-policy'), r.headers.get('x-frame-options')]).toEqual([
        path,
        expect.stringContaining("default-src 'none'"),
        'DENY',
      ]);
    }
  });

  it('a post to no action, or to a path that only looks like one, is 405 with what is allowed, and does nothing', async () => {
    const app = await start();
    await app.deliver(eventBody('ref_kept'));
    for (const path of [
      '/actions/nope',
      '/actions/constructor',
      '/actions/erase/x',
      '/x/actions/erase',
      '/actions/',
      '/actions/erase%20',
      '/',
    ]) {
      const r = await app.board.fetch(post(app.origin, path));
      expect([path, r.status, r.headers.get('allow'), await r.text()]).toEqual([path, 405, 'GET, HEAD, POST', 'Not allowed.\n']);
      expect([path, r.headers.get('x-content-type-options')]).toEqual([path, 'nosniff']);
    }
    // Another method on a page is no page either.
    const put = await app.board.fetch(new Request(`${app.origin}${BASE}/`, { method: 'PUT' }));
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, HEAD, POST']);
    expect(await app.receiver.store.ledger!.list({ reference: 'ref_kept' })).toHaveLength(1);
    expect(app.audit.filter((l) => l.fields.board !== undefined)).toEqual([]);
    // The same post to the action itself erases: the misses above were not refused for want of a token.
    expect((await app.board.fetch(post(app.origin, '/actions/erase'))).status).toBe(303);
    expect(await app.receiver.store.ledger!.list({ reference: 'ref_kept' })).toHaveLength(0);
  });

  it('a delivery’s id is read percent-decoded, and one that does not decode is named as it came', async () => {
    const app = await start();
    await app.deliver(eventBody('ref_one'));
    const [entry] = await app.receiver.store.ledger!.list({});
    const encoded = entry!.id.replace(/[a-z0-9]/, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    expect(encoded).not.toBe(entry!.id);
    const found = await app.board.fetch(new Request(`${app.origin}${BASE}/deliveries/${encoded}`));
    expect([found.status, (await found.text()).includes(`<h2>Delivery <code class="value">${entry!.id}</code></h2>`)]).toEqual([200, true]);
    const broken = await app.board.fetch(new Request(`${app.origin}${BASE}/deliveries/%E0%A4%A`));
    expect([broken.status, (await broken.text()).includes('There is no delivery %E0%A4%A in the ledger')]).toEqual([404, true]);
  });

  it('a confirmation on a read-only board is 403, and says the board is read-only for this viewer', async () => {
    const app = await start({ readOnly: true });
    await app.deliver(eventBody('ref_ro'));
    const r = await app.board.fetch(new Request(`${app.origin}${BASE}/confirm?action=erase&reference=ref_ro`));
    const text = await r.text();
    expect(r.status).toBe(403);
    expect(text).toContain(
      '<h2>Read-only</h2><p class="notice error" role="alert">This board is read-only for you: it shows deliveries, and acts on none.</p>',
    );
    expect(text).not.toContain('name="csrf"');
    // A viewer authorize says is read-only, on a board that is not.
    const viewer = await start({ authorize: () => ({ user: 'ro@shop.example', readOnly: true }) });
    const theirs = await viewer.board.fetch(new Request(`${viewer.origin}${BASE}/confirm?action=retry-all`));
    expect([theirs.status, (await theirs.text()).includes('ro@shop.example (read-only)')]).toEqual([403, true]);
  });

  it('a post with the page’s own token, from a read-only board or viewer, is 403 Read-only, and nothing is done', async () => {
    const boards = [
      ['a read-only board', await start({ readOnly: true })],
      ['a read-only viewer', await start({ authorize: () => ({ user: 'ro@shop.example', readOnly: true }) })],
    ] as const;
    for (const [who, app] of boards) {
      await app.deliver(eventBody('ref_ro'));
      // The token a page set: a read-only page holds no form, but its cookie is the token any form would carry.
      const cookie = (await getPage(app.origin, `${BASE}/`)).cookie!;
      const token = cookie.slice(cookie.indexOf('=') + 1);
      const r = await app.board.fetch(
        new Request(`${app.origin}${BASE}/actions/erase`, {
          method: 'POST',
          headers: { cookie, origin: app.origin, 'sec-fetch-site': 'same-origin', 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf: token, reference: 'ref_ro' }),
        }),
      );
      expect([who, r.status, (await r.text()).includes('<h2>Read-only</h2>')]).toEqual([who, 403, true]);
      expect([who, (await app.receiver.store.ledger!.list({ reference: 'ref_ro' })).length]).toEqual([who, 1]);
    }
  });

  it('serves the stylesheet and the script whole, under the board’s headers', async () => {
    const app = await start();
    for (const [path, body, type] of [
      ['/assets/board.css', STYLE, 'text/css; charset=utf-8'],
      ['/assets/board.js', SCRIPT, 'text/javascript; charset=utf-8'],
    ] as const) {
      const r = await app.board.fetch(new Request(`${app.origin}${BASE}${path}`));
      expect([path, r.status, r.headers.get('content-type'), await r.text()]).toEqual([path, 200, type, body]);
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect([path, name, r.headers.get(name)]).toEqual([path, name, value]);
    }
    expect(STYLE).toMatch(/^:root\{/);
    expect(SCRIPT).toMatch(/^\(function\(\)\{'use strict';/);
  });
});

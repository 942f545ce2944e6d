// authorize over every route the board serves. The routes are the router's own table (src/routes.ts),
// so a page, asset, image, stream or action added there is asked here the day it is added.
import { describe, expect, it } from 'vitest';
import type { Authorization } from '@payhook/board';
import { ACTIONS } from '../src/actions.js';
import { ROUTES } from '../src/routes.js';
import { BASE, boardApps, eventBody } from './board-app.js';

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

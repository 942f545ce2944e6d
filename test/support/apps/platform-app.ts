// A platform's receiver (two merchant accounts, acct_A and acct_B, one endpoint) with the board over
// its ledger, served by node:http through nodeBoard; the viewer is whom the x-viewer header names.
// On a memory ledger, or on Postgres (a table of its own, dropped at the end). For the accounts tests.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import pg from 'pg';
import { createReceiver, memoryStore, NonRetriableError, type Store } from '@payhook/core';
import { createBoard, type Authorization, type BoardOptions } from '@payhook/board';
import { nodeBoard } from '@payhook/board/node';
import { postgresStore } from '@payhook/store-postgres';
import { signedBody } from '@payhook/testing';
import { BASE, eventBody, formToken, type AuditLine } from './board-app.js';

export const SECRETS: Record<string, string> = { acct_A: 'whsec_acct_a', acct_B: 'whsec_acct_b' };
/** Who may look: A's staff, B's staff, and the platform's own staff (no account). */
export const VIEWERS: Record<string, Authorization> = {
  ann: { user: 'ann@merchant-a.example', account: 'acct_A' },
  bob: { user: 'bob@merchant-b.example', account: 'acct_B' },
  pat: { user: 'pat@platform.example' },
};
export type StoreKind = 'memory' | 'postgres';

async function storeOf(kind: StoreKind, databaseUrl: string | undefined): Promise<{ store: Store; drop(): Promise<void> }> {
  if (kind === 'memory') return { store: memoryStore({ ledger: true }), drop: async () => {} };
  const table = `board_accounts_${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  const store = postgresStore({ connectionString: databaseUrl!, table, ledger: true, purge: false });
  const drop = async () => {
    await store.close?.();
    const admin = new pg.Client({ connectionString: databaseUrl! });
    await admin.connect();
    await admin.query(`drop table if exists ${table}, ${table}_ledger`);
    await admin.end();
  };
  return { store, drop };
}

export async function startPlatformApp(options: { kind?: StoreKind; databaseUrl?: string; board?: Partial<BoardOptions> } = {}) {
  const audit: AuditLine[] = [];
  /** `${account}:${reference}`: the app's handler refuses these (a dead letter). */
  const refused = new Set<string>();
  const { store, drop } = await storeOf(options.kind ?? 'memory', options.databaseUrl);
  const receiver = createReceiver({
    accounts: { resolve: (name) => (Object.hasOwn(SECRETS, name) ? { secret: SECRETS[name]! } : undefined) },
    store,
    logger: (level, fields, message) => audit.push({ level, fields: fields as AuditLine['fields'], message }),
  }).on('payment.success', (event, ctx) => {
    if (refused.has(`${ctx.account}:${event.reference}`)) throw new NonRetriableError(`order ${event.merchantReference} is unknown`);
  });
  const board = createBoard({
    receiver,
    basePath: BASE,
    authorize: (request) => VIEWERS[request.headers.get('x-viewer') ?? ''] ?? false,
    live: { intervalMs: 20 },
    ...options.board,
  });
  const server = createServer(nodeBoard(board));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /** A delivery to the account's own URL, signed with its secret; its ledger record written before this resolves. */
  const deliver = async (account: string, body: string) => {
    const signed = signedBody(body, { secret: SECRETS[account]! });
    const r = await receiver.handle(
      new Request(`http://127.0.0.1/webhooks/${account}`, { method: 'POST', body: signed.body, headers: signed.headers }),
    );
    await receiver.idle();
    return r;
  };
  /** The ids of an account's records, newest first, straight from the ledger. */
  const idsOf = async (account: string, query: Record<string, unknown> = {}) =>
    (await receiver.store.ledger!.list({ ...query, account, limit: 1000 })).map((e) => e.id);
  const close = async () => {
    // A live stream a failed test left open would hold the server for its five minutes.
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await drop();
  };
  return { receiver, board, origin, audit, refused, deliver, idsOf, close };
}
export type PlatformApp = Awaited<ReturnType<typeof startPlatformApp>>;

/** A viewer's browser: pages as they see them, and posts of forms with their page's token. */
export async function browserOf(app: PlatformApp, viewer: string) {
  const headers = { 'x-viewer': viewer };
  const get = async (path: string, cookie?: string) => {
    const r = await fetch(`${app.origin}${path}`, { headers: { ...headers, ...(cookie && { cookie }) } });
    return { status: r.status, text: await r.text(), cookie: r.headers.getSetCookie()[0]?.split(';')[0] };
  };
  const first = await get(`${BASE}/`);
  const cookie = first.cookie!;
  const token = formToken((await get(`${BASE}/confirm?action=retry-all`, cookie)).text)!;
  const post = (action: string, fields: Record<string, string>) =>
    fetch(`${app.origin}${BASE}/actions/${action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        ...headers,
        cookie,
        origin: app.origin,
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: token, ...fields }),
    });
  return { get: (path: string) => get(path, cookie), post };
}

/** The rows of a list page: each row's id and, in the platform view, its Account cell. */
export const rowsOf = (page: string) =>
  [
    ...page.matchAll(
      /<tr data-id="([^"]+)"><td data-label="Received">.*?<\/td>(?:<td class="account" data-label="Account">(.*?)<\/td>)?<td class="value" data-label="Reference">/g,
    ),
  ].map((m) => ({
    id: m[1]!,
    account: m[2],
  }));

/** Deliveries newest last, A's and B's interleaved, with an equal reference, and more of B's: a page filtered after the fact would come short. */
export async function seed(app: PlatformApp) {
  await app.deliver('acct_A', eventBody('ref_same', { merchantReference: 'order-same' }));
  await app.deliver('acct_B', eventBody('ref_same', { merchantReference: 'order-same' }));
  await app.deliver('acct_B', eventBody('ref_b1'));
  await app.deliver('acct_A', eventBody('ref_a1'));
  await app.deliver('acct_B', eventBody('ref_b2'));
  await app.deliver('acct_B', eventBody('ref_b3'));
  await app.deliver('acct_A', eventBody('ref_a2'));
  return { a: await app.idsOf('acct_A'), b: await app.idsOf('acct_B') };
}

/** An id of the same shape as `id` that no record has. */
export const madeUpLike = (id: string) => `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;
/** startPlatformApp for a test file: each app started is closed after its test. */
export function platformApps(): typeof startPlatformApp {
  const apps: PlatformApp[] = [];
  afterEach(async () => {
    while (apps.length > 0) await apps.pop()!.close();
  });
  return async (...args) => {
    const app = await startPlatformApp(...args);
    apps.push(app);
    return app;
  };
}

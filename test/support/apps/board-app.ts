// A receiver with a memory ledger and the board over it, served by node:http on 127.0.0.1 through
// nodeBoard, as an Express or plain Node app mounts it. For the board's tests.
import { createServer, type Server } from 'node:http';
import { afterEach } from 'vitest';
import type { AddressInfo } from 'node:net';
import { createReceiver, memoryStore, NonRetriableError, sign, type LedgerEntry } from '@payhook/core';
import { createBoard, type BoardOptions } from '@payhook/board';
import { nodeBoard } from '@payhook/board/node';

export const SECRET = 'whsec_board_test';
export const BASE = '/admin/payments';

export interface AuditLine {
  level: string;
  fields: { board?: Record<string, unknown> };
  message: string;
}

/** A payment event of the service's shape; `refuse` makes the app's handler refuse it (a dead letter). */
export function eventBody(reference: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    event: 'payment.success',
    mode: 'sandbox',
    reference,
    merchantReference: `order-${reference}`,
    amount: '150.00',
    currency: 'ETB',
    status: 'completed',
    paymentMethod: 'telebirr',
    customer: { name: 'Abebe Kebede', email: 'abebe@example.com', phone: '+251911234567' },
    paidAt: '2026-11-27T05:00:00.000Z',
    createdAt: '2026-11-27T04:59:00.000Z',
    ...extra,
  });
}

export async function startBoardApp(options: Partial<BoardOptions> = {}) {
  const audit: AuditLine[] = [];
  const refused = new Set<string>();
  const receiver = createReceiver({
    secret: SECRET,
    store: memoryStore({ ledger: true }),
    logger: (level, fields, message) => audit.push({ level, fields: fields as AuditLine['fields'], message }),
  }).on('payment.success', (event) => {
    if (refused.has(event.reference)) throw new NonRetriableError(`order ${event.merchantReference} is unknown`);
  });
  const board = createBoard({ receiver, basePath: BASE, authorize: () => ({ user: 'ada@shop.example' }), ...options });
  const server: Server = createServer(nodeBoard(board));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /** A delivery as the service sends it, signed unless `signature` says otherwise. */
  const deliver = async (body: string, signature = sign(body, SECRET)) => {
    const r = await receiver.handle(
      new Request('http://127.0.0.1/webhooks', { method: 'POST', headers: { 'x-service-signature': signature }, body }),
    );
    await receiver.idle();
    return r;
  };
  // Every connection, a stream a failing test left open too: closing waits for none (platform-app.ts does the same).
  const close = () => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  };
  return { receiver, board, server, origin, audit, refused, deliver, close };
}

/** A board page as a browser gets it: the text, and the token cookie it set. */
export async function getPage(origin: string, path: string, cookie?: string) {
  const r = await fetch(`${origin}${path}`, { headers: cookie ? { cookie } : {} });
  const set = r.headers.getSetCookie()[0];
  return { status: r.status, headers: r.headers, text: await r.text(), cookie: set?.split(';')[0] };
}

/** The hidden token a page's form carries. */
export const formToken = (page: string): string | undefined => /name="csrf" value="([^"]+)"/.exec(page)?.[1];

/** startBoardApp for a test file: each app started is closed after its test. */
export function boardApps(): (...args: Parameters<typeof startBoardApp>) => ReturnType<typeof startBoardApp> {
  const apps: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    while (apps.length > 0) await apps.pop()!.close();
  });
  return async (...args) => {
    const app = await startBoardApp(...args);
    apps.push(app);
    return app;
  };
}

/** When the records these tests put into a ledger were received. */
export const RECORDS_AT = Date.UTC(2026, 10, 27, 5, 0, 0);
/**
 * A memory store with a ledger whose clock reads a day after RECORDS_AT: on the real clock, a
 * record dated RECORDS_AT outlives the ledger's 7-day retention a week later, and the tests fail.
 */
export const recordsStore = () => memoryStore({ ledger: true, now: () => RECORDS_AT + 24 * 60 * 60_000 });

/** A ledger record as the receiver writes one for a signed delivery answered `processed` (reference `ref_<id>`), with `over` on top. */
export const ledgerRecord = (id: string, over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id,
  receivedAt: RECORDS_AT,
  source: 'webhook',
  reference: `ref_${id}`,
  event: 'payment.success',
  outcome: 'processed',
  status: 200,
  durationMs: 3,
  attempt: 1,
  signature: 'valid',
  ...over,
});

/** A board over these records, put straight into a memory ledger: a page's text, read through the board's own fetch. */
export async function boardOver(entries: LedgerEntry[]): Promise<(path: string) => Promise<string>> {
  const receiver = createReceiver({ secret: 's', store: recordsStore() });
  await receiver.store.ledger!.append(entries);
  const board = createBoard({ receiver, basePath: BASE, authorize: () => ({ user: 'ada@shop.example' }) });
  return async (path) => (await board.fetch(new Request(`http://127.0.0.1${BASE}${path}`))).text();
}

/** A signed-in browser on a board app: its pages, and its posts of an action's form with the token its pages carry. */
export async function boardBrowser(origin: string) {
  const { cookie } = await getPage(origin, `${BASE}/`);
  const token = formToken((await getPage(origin, `${BASE}/confirm?action=retry-all`, cookie)).text)!;
  const get = (path: string) => getPage(origin, `${BASE}${path}`, cookie);
  const post = (action: string, fields: Record<string, string>) =>
    fetch(`${origin}${BASE}/actions/${action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: cookie!,
        'content-type': 'application/x-www-form-urlencoded',
        origin,
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({ csrf: token, ...fields }),
    });
  return { token, get, post };
}

import { createHash, timingSafeEqual } from 'node:crypto';
import Database from 'better-sqlite3';
import { createBoard, type Board } from '@payhook/board';
import { createClient, PaymentServiceError, type Client } from '@payhook/client';
import { createReceiver, createReconciler, type LoggerOption, type Receiver, type ReconcileRun } from '@payhook/core';
import { sqliteStore } from '@payhook/store-sqlite';
import { accountsTable, type AccountsTable, type MerchantAccount } from './accounts.js';

/** An order of one merchant account, as `GET /accounts/:account/orders/:merchantReference` shows it. */
export interface Order {
  account: string;
  merchantReference: string;
  reference: string;
  status: string;
  /** The events whose handlers ran for this order, in the order they ran. */
  events: string[];
}

export interface Answer {
  status: number;
  body: unknown;
}

export interface Platform {
  receiver: Receiver;
  board: Board;
  accounts: AccountsTable;
  checkout(account: string, body: unknown): Promise<Answer>;
  order(account: string, merchantReference: string): Answer;
  /** Add a merchant's new webhook secret (from their ePay dashboard) before the old one: both verify until `finishRotation`. */
  rotate(account: string, webhookSecret: unknown): Answer;
  /** Keep only the newest secret, once the old one's deliveries are done. */
  finishRotation(account: string): Answer;
  /** Recover what the webhooks missed for one account, over a range, with that account's own API key. */
  reconcile(account: string, range: { from: Date; to: Date }): Promise<ReconcileRun>;
  /** Whether a request carries the platform staff's credentials (the rotation routes). */
  isPlatformStaff(request: Request): boolean;
  close(): void;
}

/**
 * A platform serving many merchants' ePay accounts on one endpoint. Reads `PAYHOOK_BASE_URL`,
 * `PLATFORM_DB` (the SQLite file holding the accounts table, payhook's store and its ledger),
 * `PLATFORM_PUBLIC_URL` (where the service reaches it: each transaction's callbackUrl is
 * `<it>/webhooks/epay/<account>`), `PLATFORM_ACCOUNTS` (a JSON list of `{ id, apiKey,
 * webhookSecret, staffPassword }` seeded into the table), `PLATFORM_STAFF_PASSWORD` (the board's
 * platform view and the rotation routes) and `PAYHOOK_SIGNATURE_HEADER` (ePay's: X-Epay-Signature).
 */
export function createPlatform(env: Record<string, string | undefined> = process.env, options: { logger?: LoggerOption } = {}): Platform {
  const need = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`[payhook example] set ${name} (see examples/platform/README.md)`);
    return value;
  };
  const baseUrl = need('PAYHOOK_BASE_URL');
  const publicUrl = need('PLATFORM_PUBLIC_URL').replace(/\/+$/, '');
  const file = env.PLATFORM_DB ?? 'platform.db';
  const db = new Database(file);
  db.exec('PRAGMA journal_mode = WAL');
  const accounts = accountsTable(db);
  for (const a of JSON.parse(env.PLATFORM_ACCOUNTS ?? '[]') as (Omit<MerchantAccount, 'webhookSecrets'> & { webhookSecret: string })[]) {
    accounts.put({ id: a.id, apiKey: a.apiKey, webhookSecrets: [a.webhookSecret], staffPassword: a.staffPassword });
  }
  const clients = new Map<string, Client>();
  const clientOf = (a: MerchantAccount) => {
    let client = clients.get(a.apiKey);
    if (!client) clients.set(a.apiKey, (client = createClient({ apiKey: a.apiKey, baseUrl })));
    return client;
  };
  const orders = new Map<string, Order>();
  const keyOf = (account: string, merchantReference: string) => `${account}\n${merchantReference}`;

  const receiver = createReceiver({
    store: sqliteStore({ path: file, driver: Database, ledger: true }),
    signatureHeader: env.PAYHOOK_SIGNATURE_HEADER || undefined,
    logger: options.logger,
    // Each account's secrets and API key from the table; payhook caches them, and only the named account's secrets verify.
    accounts: {
      resolve: (id) => {
        const a = accounts.get(id);
        return a && { secret: a.webhookSecrets, client: clientOf(a) };
      },
    },
  }).onAny((event, ctx) => {
    const account = ctx.account!;
    const key = keyOf(account, event.merchantReference);
    const order = orders.get(key) ?? {
      account,
      merchantReference: event.merchantReference,
      reference: event.reference,
      status: '',
      events: [],
    };
    order.status = event.status;
    order.events.push(event.event);
    orders.set(key, order);
  });

  const staff = env.PLATFORM_STAFF_PASSWORD ? digest(`platform:${env.PLATFORM_STAFF_PASSWORD}`) : undefined;
  const isPlatformStaff = (request: Request) => {
    const given = credentialsOf(request);
    return staff !== undefined && given !== undefined && timingSafeEqual(digest(given), staff);
  };
  const board = createBoard({
    receiver,
    basePath: '/admin/payments',
    // One board: the platform's staff see every account, a merchant's staff their own account only.
    authorize: (request) => {
      if (isPlatformStaff(request)) return { user: 'platform' };
      const given = credentialsOf(request);
      const id = given?.slice(0, given.indexOf(':'));
      const a = id ? accounts.get(id) : undefined;
      if (a && given && timingSafeEqual(digest(given), digest(`${a.id}:${a.staffPassword}`)))
        return { user: `staff of ${a.id}`, account: a.id };
      return new Response('Sign in to see the board.\n', { status: 401, headers: { 'www-authenticate': 'Basic realm="payments"' } });
    },
  });

  return {
    receiver,
    board,
    accounts,
    isPlatformStaff,
    async checkout(account, body) {
      const a = accounts.get(account);
      if (!a) return { status: 404, body: { error: `no account ${account}` } };
      const input = (body ?? {}) as Record<string, string>;
      try {
        const { reference, checkoutUrl } = await clientOf(a).transactions.initialize(
          {
            amount: input.amount!,
            currencyCode: input.currencyCode as 'ETB',
            customerPhone: input.customerPhone!,
            merchantReference: input.merchantReference!,
            // The service calls this URL first: the account is its last segment.
            callbackUrl: `${publicUrl}/webhooks/epay/${a.id}`,
          },
          { idempotencyKey: `order:${input.merchantReference}` },
        );
        const key = keyOf(a.id, input.merchantReference!);
        if (!orders.has(key))
          orders.set(key, { account: a.id, merchantReference: input.merchantReference!, reference, status: 'pending', events: [] });
        return { status: 200, body: { reference, checkoutUrl } };
      } catch (error) {
        if (error instanceof PaymentServiceError && error.status >= 400 && error.status < 500) {
          return { status: error.status, body: { error: error.serviceMessage } };
        }
        console.error(error);
        return { status: 502, body: { error: 'the payment service is unavailable; try again' } };
      }
    },
    order(account, merchantReference) {
      const order = orders.get(keyOf(account, merchantReference));
      return order ? { status: 200, body: order } : { status: 404, body: { error: `no order ${merchantReference}` } };
    },
    rotate(account, webhookSecret) {
      const a = accounts.get(account);
      if (!a) return { status: 404, body: { error: `no account ${account}` } };
      if (typeof webhookSecret !== 'string' || webhookSecret.length < 8)
        return { status: 400, body: { error: 'send { "webhookSecret": "<the new secret>" }' } };
      accounts.setSecrets(a.id, [webhookSecret, a.webhookSecrets[0]!]);
      // The cached settings hold the old secret only: the next delivery reads the table again.
      receiver.forgetAccount(a.id);
      return { status: 200, body: { account: a.id, secrets: 2 } };
    },
    async reconcile(account, range) {
      const a = accounts.get(account);
      if (!a) throw new Error(`[payhook example] no account ${account}`);
      // One reconciler per account: its key lists that account's transactions only, and its events run under its keys.
      return createReconciler({ receiver, client: clientOf(a), account: a.id }).run(range);
    },
    finishRotation(account) {
      const a = accounts.get(account);
      if (!a) return { status: 404, body: { error: `no account ${account}` } };
      accounts.setSecrets(a.id, a.webhookSecrets.slice(0, 1));
      receiver.forgetAccount(a.id);
      return { status: 200, body: { account: a.id, secrets: 1 } };
    },
    close() {
      (receiver.store as { close?: () => void }).close?.();
      db.close();
    },
  };
}

/** Both sides hashed first, so the comparison takes the same time whatever their lengths. */
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The `user:password` an `Authorization: Basic …` header carries, or undefined. */
function credentialsOf(request: Request): string | undefined {
  const match = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(request.headers.get('authorization') ?? '');
  return match ? Buffer.from(match[1]!, 'base64').toString('utf8') : undefined;
}

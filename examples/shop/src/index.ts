import { createHash, timingSafeEqual } from 'node:crypto';
import { createBoard, type Board } from '@payhook/board';
import { createClient, PaymentServiceError } from '@payhook/client';
import { pino } from 'pino';
import { createReceiver, memoryStore, type LoggerOption, type Receiver, type Store, type TransactionStatus } from '@payhook/core';
import { STATUS_RANK } from '@payhook/core/lifecycle';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';

/** How far along a status is (core's STATUS_RANK), or undefined for a status the lifecycle does not know. */
const rankOf = (status: string): number | undefined =>
  Object.hasOwn(STATUS_RANK, status) ? STATUS_RANK[status as TransactionStatus] : undefined;

/** An order as the examples show it at `GET /orders/:merchantReference`. */
export interface Order {
  merchantReference: string;
  reference: string;
  status: string;
  /** The events whose handlers ran for this order, in the order they ran. */
  events: string[];
}

/** An HTTP answer the framework glue writes as JSON. */
export interface Answer {
  status: number;
  body: unknown;
}

export interface Shop {
  receiver: Receiver;
  store: Store;
  /** The delivery board at `/admin/payments`, behind HTTP Basic auth (`admin`, `PAYHOOK_BOARD_PASSWORD`). */
  board: Board;
  /** `POST /checkout`: initialize a transaction for an order. */
  checkout(body: unknown): Promise<Answer>;
  /** `GET /orders/:merchantReference`. */
  order(merchantReference: string): Answer;
  close(): Promise<void>;
}

/**
 * The merchant logic every example shares, so each example is only its framework's routing.
 * Reads `PAYHOOK_BASE_URL`, `PAYHOOK_API_KEY`, `PAYHOOK_WEBHOOK_SECRET`, and `REDIS_URL` or
 * `DATABASE_URL` to pick a shared store (otherwise the in-memory one), each keeping a ledger for the
 * board, `PAYHOOK_BOARD_PASSWORD` to open the board (closed without it), and `PAYHOOK_SIGNATURE_HEADER`
 * (`X-Epay-Signature` for ePay; unset, the interface's `X-Service-Signature`). Logs through pino (JSON
 * lines on stdout, `LOG_LEVEL` default info) unless given another logger.
 *
 * Orders live in this process's memory: enough for a demo. A real shop keeps them in its database,
 * and with the Postgres store can write them in the same transaction as the done record.
 */
export function createShop(env: Record<string, string | undefined> = process.env, options: { logger?: LoggerOption } = {}): Shop {
  const need = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`[payhook example] set ${name} (see the example's README)`);
    return value;
  };
  const client = createClient({ apiKey: need('PAYHOOK_API_KEY'), baseUrl: need('PAYHOOK_BASE_URL') });
  const store: Store = env.REDIS_URL
    ? redisStore({ url: env.REDIS_URL, prefix: 'payhook-example:', ledger: true })
    : env.DATABASE_URL
      ? postgresStore({ connectionString: env.DATABASE_URL, table: 'payhook_example_deliveries', ledger: true })
      : memoryStore({ ledger: true });
  const orders = new Map<string, Order>();

  // pino, as a production service logs: one JSON line per delivery (info), refusals at warn with their reason.
  const logger = options.logger ?? pino({ name: 'shop', level: env.LOG_LEVEL ?? 'info' });
  // ePay signs in X-Epay-Signature: PAYHOOK_SIGNATURE_HEADER=X-Epay-Signature. Unset, the interface's X-Service-Signature.
  const signatureHeader = env.PAYHOOK_SIGNATURE_HEADER || undefined;
  const receiver = createReceiver({ secret: need('PAYHOOK_WEBHOOK_SECRET'), store, logger, signatureHeader }).onAny((event) => {
    const order = orders.get(event.merchantReference) ?? {
      merchantReference: event.merchantReference,
      reference: event.reference,
      status: event.status,
      events: [],
    };
    // Deliveries can arrive out of order (a refund before its payment): the status only moves forward.
    // A status the lifecycle does not know is taken as is.
    const rank = rankOf(event.status);
    if (rank === undefined || rank >= (rankOf(order.status) ?? 0)) order.status = event.status;
    order.events.push(event.event);
    orders.set(event.merchantReference, order);
  });

  return {
    receiver,
    store,
    board: shopBoard(receiver, env.PAYHOOK_BOARD_PASSWORD),
    async checkout(body) {
      const input = (body ?? {}) as Record<string, string>;
      try {
        const { reference, checkoutUrl } = await client.transactions.initialize(
          {
            amount: input.amount!,
            currencyCode: input.currencyCode as 'ETB',
            customerPhone: input.customerPhone!,
            merchantReference: input.merchantReference!,
          },
          // One transaction per order, however often the customer presses the button.
          { idempotencyKey: input.merchantReference ? `order:${input.merchantReference}` : undefined },
        );
        if (!orders.has(input.merchantReference!)) {
          orders.set(input.merchantReference!, { merchantReference: input.merchantReference!, reference, status: 'pending', events: [] });
        }
        return { status: 200, body: { reference, checkoutUrl } };
      } catch (error) {
        if (error instanceof PaymentServiceError && error.status >= 400 && error.status < 500) {
          return { status: error.status, body: { error: error.serviceMessage } };
        }
        console.error(error);
        return { status: 502, body: { error: 'the payment service is unavailable; try again' } };
      }
    },
    order(merchantReference) {
      const order = orders.get(merchantReference);
      return order ? { status: 200, body: order } : { status: 404, body: { error: `no order ${merchantReference}` } };
    },
    close: async () => store.close?.(),
  };
}

const BOARD_USER = 'admin';

/** Both sides hashed first, so the comparison takes the same time whatever their lengths. */
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The `user:password` an `Authorization: Basic …` header carries, or undefined. */
function credentialsOf(request: Request): string | undefined {
  const match = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(request.headers.get('authorization') ?? '');
  return match ? Buffer.from(match[1]!, 'base64').toString('utf8') : undefined;
}

const signIn = () =>
  new Response('Sign in to see the board.\n', {
    status: 401,
    headers: { 'www-authenticate': 'Basic realm="payhook board", charset="UTF-8"' },
  });

/**
 * The shop's board at `/admin/payments`, behind HTTP Basic auth: user `admin`, the password
 * `PAYHOOK_BOARD_PASSWORD`. Without that password it is mounted but closed: every request gets 401.
 * A real shop asks its own sign-in instead (see @payhook/board's README).
 */
function shopBoard(receiver: Receiver, password: string | undefined): Board {
  const expected = password ? digest(`${BOARD_USER}:${password}`) : undefined;
  return createBoard({
    receiver,
    basePath: '/admin/payments',
    authorize: (request) => {
      const given = credentialsOf(request);
      if (expected === undefined || given === undefined || !timingSafeEqual(digest(given), expected)) return signIn();
      return { user: BOARD_USER };
    },
  });
}

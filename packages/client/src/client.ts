import type { Mode } from '@payhook/core';
import {
  initializeInputSchema,
  initializeResultSchema,
  listPageSchema,
  listQuerySchema,
  timelineSchema,
  transactionRecordSchema,
  type InitializeInput,
  type InitializeResult,
  type Timeline,
  type TransactionRecord,
} from '@payhook/core/api';
import * as z from 'zod';
import { walkPages, type ListFilters, type Transaction, type TransactionPage } from './list.js';
import { createProvidersApi, type ProvidersApi } from './providers.js';
import type { Priority, RateLimiter } from './rate-limiter.js';
import { createTransport } from './transport.js';

/** What `createClient` takes: the API key and the service's origin; the rest have defaults. */
export interface ClientOptions {
  /** `sk_test_…` (sandbox) or `sk_live_…` (live). */
  apiKey: string;
  /** The service's origin, without `/v1`. */
  baseUrl: string;
  /** The fetch to send with (for a proxy's agent, or a fake in tests). Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Per attempt. Default 10,000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt, for 429 and for 5xx or network errors on safe calls. Default 3. */
  maxRetries?: number;
  /** Shared with other clients of the same key to stay inside 100 requests per 60 s. */
  limiter?: RateLimiter;
  /** How this client's calls queue on a shared limiter. Default `foreground`. */
  priority?: Priority;
  /** How waiting is done (for a virtual clock in tests). Default: real timers. */
  sleep?: (ms: number) => Promise<void>;
}

/** The typed client `createClient` makes: its calls throw `PaymentServiceError` on any failure. */
export interface Client {
  /** `sandbox` for a `sk_test_` key, `live` for a `sk_live_` key. */
  readonly mode: Mode;
  /** The transaction endpoints (section 4). */
  transactions: {
    /** Create a transaction. Always sends an idempotency key (a new UUID unless given) and reuses it on its own retries. */
    initialize(input: InitializeInput, options?: { idempotencyKey?: string }): Promise<InitializeResult>;
    /** The transaction when it is completed; a 400 `PaymentServiceError` naming the status otherwise. */
    verify(reference: string): Promise<Transaction>;
    /** Cancel a pending or processing transaction; resolves on any 2xx (the service answers 204). Not retried on 5xx: a cancel may have happened. */
    cancel(reference: string): Promise<void>;
    /** The transaction as the service has it, in any status. */
    retrieve(reference: string): Promise<Transaction>;
    /** One page, newest first, at most 10 transactions; pass its `nextCursor` as `cursor` with the same filters for the next. */
    list(filters?: ListFilters): Promise<TransactionPage>;
    /** Every transaction of the filters, across pages, and across 90-day windows when the range is longer. */
    listAll(filters?: Omit<ListFilters, 'cursor'>): AsyncIterable<Transaction>;
    /** The transaction's events, oldest first. */
    timeline(reference: string): Promise<Timeline>;
  };
  /** The payment-provider endpoints. */
  providers: ProvidersApi;
}

const referenceSchema = z.string().min(1, { error: "reference is required: pass the transaction's reference, as initialize returned it" });
const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A typed client of the payment service: every endpoint, inputs checked before sending, results
 * validated, 429 honoured through `Retry-After`, transient failures retried with backoff.
 *
 * @example
 * const client = createClient({ apiKey: process.env.PAYHOOK_API_KEY!, baseUrl: 'https://api.example.com' });
 * const { reference, checkoutUrl } = await client.transactions.initialize({
 *   amount: '1500.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference: 'order-1001',
 * });
 */
export function createClient(options: ClientOptions): Client {
  if (typeof options.apiKey !== 'string' || !/^sk_(test|live)_/.test(options.apiKey)) {
    throw new TypeError('[@payhook/client] apiKey must be a secret key starting sk_test_ (sandbox) or sk_live_ (live).');
  }
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch {
    throw new TypeError(`[@payhook/client] baseUrl must be an absolute URL such as https://api.example.com; got ${options.baseUrl}.`);
  }
  const mode = options.apiKey.startsWith('sk_live_') ? 'live' : 'sandbox';
  const transport = createTransport({
    apiKey: options.apiKey,
    base,
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? 10_000,
    maxRetries: options.maxRetries ?? 3,
    sleep: options.sleep ?? realSleep,
    limiter: options.limiter,
    priority: options.priority ?? 'foreground',
  });

  /** The key says which environment answered: a record the service sent without `mode` gets it. */
  const withMode = (record: TransactionRecord): Transaction => (record.mode ? (record as Transaction) : { ...record, mode });

  const path = (reference: string, rest = '') => {
    transport.refuse(referenceSchema, reference, rest === '/cancel' ? 'POST' : 'GET', `/v1/transactions/${String(reference ?? '')}${rest}`);
    return `/v1/transactions/${encodeURIComponent(reference)}${rest}`;
  };

  function listQuery(filters: ListFilters): Record<string, string> {
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries(filters) as [string, unknown][]) {
      if (v === undefined) continue;
      query[k] = v instanceof Date ? v.toISOString() : String(v);
    }
    transport.refuse(listQuerySchema, query, 'GET', '/v1/transactions');
    return query;
  }

  const record = async (reference: string, rest: string) =>
    withMode(await transport.call({ method: 'GET', path: path(reference, rest), safe: true }, transactionRecordSchema));

  const transactions: Client['transactions'] = {
    async initialize(input, opts = {}) {
      const body = transport.refuse(initializeInputSchema, input, 'POST', '/v1/transactions/initialize');
      const idempotencyKey = opts.idempotencyKey ?? crypto.randomUUID();
      return transport.call(
        { method: 'POST', path: '/v1/transactions/initialize', body, idempotencyKey, safe: true },
        initializeResultSchema,
      );
    },
    verify: async (reference) => record(reference, '/verify'),
    retrieve: async (reference) => record(reference, ''),
    cancel: async (reference) => transport.send({ method: 'POST', path: path(reference, '/cancel'), safe: false }),
    timeline: async (reference) => transport.call({ method: 'GET', path: path(reference, '/timeline'), safe: true }, timelineSchema),
    async list(filters = {}) {
      const page = await transport.call({ method: 'GET', path: '/v1/transactions', query: listQuery(filters), safe: true }, listPageSchema);
      return { ...page, data: page.data.map(withMode) };
    },
    listAll: (filters = {}) =>
      walkPages(transactions.list, filters, () => new URL('v1/transactions', `${base.href.replace(/\/$/, '')}/`).href),
  };
  return { mode, transactions, providers: createProvidersApi(transport) };
}

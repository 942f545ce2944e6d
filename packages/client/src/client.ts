import {
  errorEnvelopeSchema,
  initializeInputSchema,
  initializeResultSchema,
  listPageSchema,
  listQuerySchema,
  MAX_LIST_RANGE_MS,
  successEnvelope,
  timelineSchema,
  transactionRecordSchema,
  type InitializeInput,
  type InitializeResult,
  type ListPage,
  type ListQueryInput,
  type Timeline,
  type TransactionRecord,
} from '@payhook/core/api';
import type { z } from 'zod';
import { PaymentServiceError, type FailedRequest } from './errors.js';
import type { Priority, RateLimiter } from './rate-limiter.js';

export interface ClientOptions {
  /** `sk_test_…` (sandbox) or `sk_live_…` (live). */
  apiKey: string;
  /** The service's base URL, without `/v1`. */
  baseUrl: string;
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

/** List filters as values; dates may be `Date` objects or ISO strings. */
export interface ListFilters {
  from?: Date | string;
  to?: Date | string;
  currency?: string;
  status?: TransactionRecord['status'];
  limit?: number;
  cursor?: string;
}

export interface Client {
  transactions: {
    /** Create a transaction. Always sends an idempotency key (a new UUID unless given) and reuses it on its own retries. */
    initialize(input: InitializeInput, options?: { idempotencyKey?: string }): Promise<InitializeResult>;
    /** The transaction when it is completed; a 400 `PaymentServiceError` naming the status otherwise. */
    verify(reference: string): Promise<TransactionRecord>;
    /** Cancel a pending or processing transaction. Not retried on 5xx: a cancel may have happened. */
    cancel(reference: string): Promise<TransactionRecord>;
    retrieve(reference: string): Promise<TransactionRecord>;
    /** One page. */
    list(filters?: ListFilters): Promise<ListPage>;
    /** Every transaction of the filters, across pages, and across 90-day windows when the range is longer. */
    listAll(filters?: Omit<ListFilters, 'cursor'>): AsyncIterable<TransactionRecord>;
    timeline(reference: string): Promise<Timeline>;
  };
}

interface Call<T extends z.ZodType> {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  idempotencyKey?: string;
  data: T;
  /** Whether a 5xx or a network error may be retried: true for reads and for initialize with its key. */
  safe: boolean;
}

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
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxRetries = options.maxRetries ?? 3;
  const sleep = options.sleep ?? realSleep;
  const priority = options.priority ?? 'foreground';

  const backoff = (attempt: number) => Math.random() * Math.min(10_000, 500 * 2 ** attempt);

  async function call<T extends z.ZodType>(spec: Call<T>): Promise<z.output<T>> {
    const url = new URL(spec.path.replace(/^\//, ''), base.href.endsWith('/') ? base : `${base.href}/`);
    for (const [k, v] of Object.entries(spec.query ?? {})) url.searchParams.set(k, v);
    const request: FailedRequest = { method: spec.method, url: url.href, sent: true };
    const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey}`, accept: 'application/json' };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    if (spec.idempotencyKey) {
      headers['x-idempotency-key'] = spec.idempotencyKey;
      request.idempotencyKey = spec.idempotencyKey;
    }
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);

    for (let attempt = 0; ; attempt++) {
      await options.limiter?.acquire(priority);
      let response: Response;
      try {
        response = await doFetch(url, { method: spec.method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      } catch (cause) {
        const timedOut = (cause as Error)?.name === 'TimeoutError';
        const error = new PaymentServiceError(
          0,
          timedOut ? `no answer within ${timeoutMs} ms` : `could not reach the service (${(cause as Error)?.message ?? cause}); check baseUrl and the network`,
          request,
          undefined,
          { cause },
        );
        if (spec.safe && attempt < maxRetries) {
          await sleep(backoff(attempt));
          continue;
        }
        throw error;
      }
      const payload: unknown = await response.json().catch(() => undefined);
      if (response.status >= 200 && response.status < 300) {
        const parsed = successEnvelope(spec.data).safeParse(payload);
        if (parsed.success) return (parsed.data as { data: z.output<T> }).data;
        throw new PaymentServiceError(
          response.status,
          `the answer does not have the documented shape (${parsed.error.issues[0]?.path.join('.') || 'body'}: ${parsed.error.issues[0]?.message})`,
          request,
        );
      }
      const envelope = errorEnvelopeSchema.safeParse(payload);
      const message = envelope.success ? envelope.data.data.message : `HTTP ${response.status} without the error envelope`;
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      if (attempt < maxRetries && response.status === 429) {
        await sleep(retryAfterMs ?? backoff(attempt));
        continue;
      }
      if (attempt < maxRetries && response.status >= 500 && spec.safe) {
        await sleep(backoff(attempt));
        continue;
      }
      throw new PaymentServiceError(response.status, message, request, retryAfterMs);
    }
  }

  const path = (reference: string, rest = '') => `/v1/transactions/${encodeURIComponent(reference)}${rest}`;

  function checkList(filters: ListFilters): Record<string, string> {
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries(filters)) {
      if (v === undefined) continue;
      query[k] = v instanceof Date ? v.toISOString() : String(v);
    }
    refuseInvalid(listQuerySchema, query, 'GET', '/v1/transactions');
    return query;
  }

  function refuseInvalid(schema: z.ZodType, value: unknown, method: string, where: string) {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    throw new PaymentServiceError(400, result.error.issues[0]!.message, { method, url: new URL(where, base).href, sent: false });
  }

  const transactions: Client['transactions'] = {
    async initialize(input, opts = {}) {
      const data = refuseInvalid(initializeInputSchema, input, 'POST', '/v1/transactions/initialize');
      return call({
        method: 'POST',
        path: '/v1/transactions/initialize',
        body: data,
        idempotencyKey: opts.idempotencyKey ?? crypto.randomUUID(),
        data: initializeResultSchema,
        safe: true,
      });
    },
    verify: (reference) => call({ method: 'GET', path: path(reference, '/verify'), data: transactionRecordSchema, safe: true }),
    cancel: (reference) => call({ method: 'POST', path: path(reference, '/cancel'), data: transactionRecordSchema, safe: false }),
    retrieve: (reference) => call({ method: 'GET', path: path(reference), data: transactionRecordSchema, safe: true }),
    timeline: (reference) => call({ method: 'GET', path: path(reference, '/timeline'), data: timelineSchema, safe: true }),
    async list(filters = {}) {
      return call({ method: 'GET', path: '/v1/transactions', query: checkList(filters), data: listPageSchema, safe: true });
    },
    async *listAll(filters = {}) {
      for (const window of windows(filters)) {
        let cursor: string | undefined;
        do {
          const page = await transactions.list({ ...filters, ...window, cursor });
          yield* page.items;
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
      }
    },
  };
  return { transactions };
}

/**
 * Split a range longer than the service's 90 days into windows, newest first (the list's own
 * order), that neither overlap nor leave a gap.
 */
export function windows(filters: Pick<ListFilters, 'from' | 'to'>): { from?: string; to?: string }[] {
  if (filters.from === undefined || filters.to === undefined) {
    return [{ from: iso(filters.from), to: iso(filters.to) }];
  }
  const from = new Date(filters.from).getTime();
  const to = new Date(filters.to).getTime();
  if (!(to - from > MAX_LIST_RANGE_MS)) return [{ from: iso(filters.from), to: iso(filters.to) }];
  const out: { from: string; to: string }[] = [];
  for (let end = to; end >= from; end -= MAX_LIST_RANGE_MS + 1) {
    out.push({ from: new Date(Math.max(from, end - MAX_LIST_RANGE_MS)).toISOString(), to: new Date(end).toISOString() });
  }
  return out;
}

const iso = (d: Date | string | undefined) => (d === undefined ? undefined : d instanceof Date ? d.toISOString() : d);

/** `Retry-After` in seconds or as an HTTP date, in milliseconds. */
function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

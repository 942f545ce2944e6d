import type { z } from 'zod';
import { PaymentServiceError, serviceMessageOf, type FailedRequest } from './errors.js';
import type { Priority, RateLimiter } from './rate-limiter.js';

/** What the transport needs from the client's options. */
export interface TransportOptions {
  apiKey: string;
  base: URL;
  fetch: typeof fetch;
  timeoutMs: number;
  maxRetries: number;
  sleep: (ms: number) => Promise<void>;
  limiter?: RateLimiter;
  priority: Priority;
}

/** One request of the API. */
export interface Call {
  method: 'GET' | 'POST';
  /** From the origin, `/v1` included. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  idempotencyKey?: string;
  /** Whether a 5xx or a network error may be retried: true for reads and for initialize with its key. */
  safe: boolean;
}

export interface Transport {
  /** Send, then check the success body against `schema`. */
  call<T extends z.ZodType>(spec: Call, schema: T): Promise<z.output<T>>;
  /** Send, and take any 2xx as done whatever its body (cancel's 204). */
  send(spec: Call): Promise<void>;
  /** Throw the 400 the service would give, without sending, when `value` fails `schema`. */
  refuse<T extends z.ZodType>(schema: T, value: unknown, method: string, path: string): z.output<T>;
}

interface Answer {
  status: number;
  /** The parsed JSON body; undefined when the body was empty, `text` when it was not JSON. */
  payload: unknown;
  text: string;
  request: FailedRequest;
}

/** The transport of a client: auth, timeouts, the shared limiter, `Retry-After` and backoff, error bodies. */
export function createTransport(o: TransportOptions): Transport {
  const backoff = (attempt: number) => Math.random() * Math.min(10_000, 500 * 2 ** attempt);
  const root = o.base.href.endsWith('/') ? o.base : new URL(`${o.base.href}/`);

  async function exchange(spec: Call): Promise<Answer> {
    const url = new URL(spec.path.replace(/^\//, ''), root);
    for (const [k, v] of Object.entries(spec.query ?? {})) url.searchParams.set(k, v);
    const request: FailedRequest = { method: spec.method, url: url.href, sent: true };
    const headers: Record<string, string> = { authorization: `Bearer ${o.apiKey}`, accept: 'application/json' };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    if (spec.idempotencyKey) {
      headers['x-idempotency-key'] = spec.idempotencyKey;
      request.idempotencyKey = spec.idempotencyKey;
    }
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);

    for (let attempt = 0; ; attempt++) {
      await o.limiter?.acquire(o.priority);
      let response: Response;
      let text: string;
      try {
        response = await o.fetch(url, { method: spec.method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(o.timeoutMs) });
        text = await response.text();
      } catch (cause) {
        const timedOut = (cause as Error)?.name === 'TimeoutError';
        const error = new PaymentServiceError(
          0,
          timedOut
            ? `no answer within ${o.timeoutMs} ms`
            : `could not reach the service (${(cause as Error)?.message ?? cause}); check baseUrl and the network`,
          request,
          undefined,
          { cause },
        );
        if (spec.safe && attempt < o.maxRetries) {
          await o.sleep(backoff(attempt));
          continue;
        }
        throw error;
      }
      const payload = parseJson(text);
      if (response.status >= 200 && response.status < 300) return { status: response.status, payload, text, request };
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      // A 429 was refused before anything happened: every call may try again, cancel too.
      if (attempt < o.maxRetries && response.status === 429) {
        await o.sleep(retryAfterMs ?? backoff(attempt));
        continue;
      }
      if (attempt < o.maxRetries && response.status >= 500 && spec.safe) {
        await o.sleep(backoff(attempt));
        continue;
      }
      const message = serviceMessageOf(payload) ?? `HTTP ${response.status} with no message from the service${text ? '' : ' (empty body)'}`;
      throw new PaymentServiceError(response.status, message, request, retryAfterMs);
    }
  }

  return {
    async call(spec, schema) {
      const answer = await exchange(spec);
      if (answer.payload === undefined || answer.payload === answer.text) {
        throw new PaymentServiceError(
          answer.status,
          `the answer ${answer.text ? 'is not JSON' : 'has no body'}, where the documented result was expected; check that baseUrl is the payment service's origin (without /v1)`,
          answer.request,
        );
      }
      const parsed = schema.safeParse(answer.payload);
      if (parsed.success) return parsed.data;
      throw new PaymentServiceError(
        answer.status,
        `the answer does not have the documented shape: ${describe(parsed.error.issues[0], answer.payload)}; check that baseUrl is the payment service's origin (without /v1), or report this answer to the service`,
        answer.request,
      );
    },
    async send(spec) {
      await exchange(spec);
    },
    refuse(schema, value, method, path) {
      const result = schema.safeParse(value);
      if (result.success) return result.data;
      throw new PaymentServiceError(400, result.error.issues[0]!.message, {
        method,
        url: new URL(path.replace(/^\//, ''), root).href,
        sent: false,
      });
    },
  };
}

/** One zod issue in words that name the field, and say whether it was missing or wrong. */
function describe(issue: z.core.$ZodIssue | undefined, payload: unknown): string {
  if (!issue) return 'the body was refused';
  if (issue.path.length === 0) return `the body is invalid (${issue.message})`;
  const field = `field "${issue.path.join('.')}"`;
  const value = issue.path.reduce<unknown>(
    (at, key) => (at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[key] : undefined),
    payload,
  );
  if (value === undefined) return `${field} is missing (${issue.message.replace(/^Invalid \w+: /, '')})`;
  return `${field} is invalid (${issue.message})`;
}

/** The JSON of a body; undefined for an empty one; the text itself when it is not JSON. */
function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `Retry-After` in seconds or as an HTTP date, in milliseconds. */
function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

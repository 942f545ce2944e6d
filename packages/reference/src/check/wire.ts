/**
 * The check's only view of the service: plain HTTP requests with the sandbox key, each bounded in
 * time and in the bytes read, every answer's headers kept for the rate-limit check.
 */
export interface Answer {
  /** `POST /v1/transactions/initialize`, for the report. */
  request: string;
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body; undefined when empty or not JSON. */
  json: unknown;
  ms: number;
}

export interface SendOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** The Authorization header's key; null sends none. Default: the run's key. */
  key?: string | null;
  /** Return a 429 as it is instead of waiting `Retry-After` and trying again. */
  keep429?: boolean;
}

export interface Wire {
  send(method: string, path: string, options?: SendOptions): Promise<Answer>;
  /** Every answer so far, in order (the rate-limit check reads their headers). */
  readonly answers: Answer[];
}

/** The service could not be asked at all (connection refused, timeout, body too large). */
export class WireError extends Error {}

/** At most this many bytes of any answer are read. */
export const MAX_BODY = 1024 * 1024;
/** At most this long is waited for a 429's Retry-After before trying again. */
const MAX_WAIT_S = 60;

async function readBounded(res: Response, request: string): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY) {
      await reader.cancel();
      throw new WireError(`${request} answered more than ${MAX_BODY} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Seconds from a Retry-After value: delta-seconds or an HTTP date (as go-sdk errors.go reads it). */
export function retryAfterSeconds(value: string | null): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+(?:\.\d+)?$/.test(value.trim())) return Number(value);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}

export function createWire(base: string, key: string, timeoutMs: number, note: (line: string) => void): Wire {
  const answers: Answer[] = [];
  async function once(method: string, path: string, options: SendOptions): Promise<Answer> {
    const request = `${method} ${path}`;
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'payhook-reference-check', ...options.headers };
    const auth = options.key === undefined ? key : options.key;
    if (auth !== null) headers.authorization = `Bearer ${auth}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const started = Date.now();
    let res: Response;
    let text: string;
    try {
      res = await fetch(base + path, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await readBounded(res, request);
    } catch (error) {
      if (error instanceof WireError) throw error;
      const e = error as Error & { cause?: { code?: string; message?: string } };
      const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (e.cause?.code ?? e.cause?.message ?? e.message);
      throw new WireError(`${request} failed: ${why}`);
    }
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    const answer = { request, status: res.status, headers: res.headers, text, json, ms: Date.now() - started };
    answers.push(answer);
    return answer;
  }
  return {
    answers,
    async send(method, path, options = {}) {
      // A 429 is waited out as the SDKs do (Retry-After, else a backoff), twice at most.
      for (let attempt = 0; ; attempt++) {
        const answer = await once(method, path, options);
        if (answer.status !== 429 || options.keep429 || attempt === 2) return answer;
        const wait = Math.min(MAX_WAIT_S, retryAfterSeconds(answer.headers.get('retry-after')) ?? 2 ** (attempt + 1));
        note(`${answer.request} answered 429: waiting ${Math.ceil(wait)} s as Retry-After says, then trying again`);
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      }
    },
  };
}

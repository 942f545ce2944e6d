/**
 * The check's only view of the service: plain HTTP requests with the sandbox key, each bounded in
 * time and in the bytes read, every answer's headers kept for the rate-limit check.
 */
export interface Answer {
  /** `POST /v1/transactions/initialize`, for the report. */
  request: string;
  status: number;
  headers: AnswerHeaders;
  text: string;
  /** The parsed body; undefined when empty or not JSON. */
  json: unknown;
  ms: number;
}

/** An answer's headers (names in lower case) with the run's secrets masked: a mask is not a ByteString, so not a `Headers`. */
export interface AnswerHeaders extends Iterable<[string, string]> {
  get(name: string): string | null;
}

function keptHeaders(headers: Headers, redact: (text: string) => string): AnswerHeaders {
  const kept = new Map([...headers].map(([name, value]) => [name, redact(value)]));
  return { get: (name) => kept.get(name.toLowerCase()) ?? null, [Symbol.iterator]: () => kept[Symbol.iterator]() };
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

/**
 * The run's key was refused on the API: a 401, or a 403 before any request with it was accepted.
 * No check can run with it, so the run stops (the CLI says so in one line, exit 3).
 */
export class KeyRefused extends Error {
  constructor(
    readonly answer: Answer,
    /** Requests with the key the service had answered otherwise before. */
    readonly accepted: number,
  ) {
    super(`${answer.request} answered ${answer.status}`);
  }
}

/** A 403 to the run's key after others with it were accepted: the key lacks what this request needs; its check is skipped. */
export class NotAllowed extends Error {
  constructor(readonly answer: Answer) {
    super(`${answer.request} answered ${answer.status}`);
  }
}

/** `401 "Invalid API key"`: an answer's status and the start of its message, for a one-line reason. */
export function statusAndMessage(a: Answer): string {
  const message = (a.json as { data?: { message?: unknown } } | undefined)?.data?.message;
  const text = typeof message === 'string' ? message : a.text;
  return text.trim() === '' ? String(a.status) : `${a.status} "${text.length > 100 ? `${text.slice(0, 99)}…` : text}"`;
}

/**
 * The body parsed with every string (and object key) passed through `redact`: an answer that
 * echoes the key is masked before any check reads, cuts or prints a piece of it.
 */
export function parseRedacted(text: string, redact: (text: string) => string): unknown {
  try {
    return text === ''
      ? undefined
      : JSON.parse(text, (_name, value: unknown) => {
          if (typeof value === 'string') return redact(value);
          if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
          const entries = Object.entries(value);
          return entries.some(([name]) => redact(name) !== name) ? Object.fromEntries(entries.map(([n, v]) => [redact(n), v])) : value;
        });
  } catch {
    return undefined;
  }
}

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

export interface WireOptions {
  base: string;
  /** The run's key: its answers tell whether it was refused (KeyRefused, NotAllowed). */
  key: string;
  timeoutMs: number;
  /** Progress notes (waiting out a 429). */
  note: (line: string) => void;
  /** Masks the secrets in what the service sends: applied to every body and header before it is kept. */
  redact: (text: string) => string;
}

/** Whether an answer to the run's key on the API refused it; counts the accepted ones. */
function refusals(): (answer: Answer) => void {
  let accepted = 0;
  return (answer) => {
    if (answer.status === 401 || (answer.status === 403 && accepted === 0)) throw new KeyRefused(answer, accepted);
    if (answer.status === 403) throw new NotAllowed(answer);
    accepted++;
  };
}

export function createWire({ base, key, timeoutMs, note, redact }: WireOptions): Wire {
  const answers: Answer[] = [];
  const refused = refusals();
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
    const kept = keptHeaders(res.headers, redact);
    const answer = {
      request,
      status: res.status,
      headers: kept,
      text: redact(text),
      json: parseRedacted(text, redact),
      ms: Date.now() - started,
    };
    answers.push(answer);
    // Only the API (/v1) decides: a 401 or 403 from sandbox control means no sandbox control, not a bad key.
    if (auth === key && path.startsWith('/v1/')) refused(answer);
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

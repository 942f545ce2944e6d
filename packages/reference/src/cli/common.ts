import { parseArgs, type ParseArgsConfig } from 'node:util';
import { RunError } from '../check/run.js';

/** A bad command line: printed with the command's usage, exit code 2. */
export class UsageError extends Error {}
// Thrown by every command; defined where `check`, a floor below the commands, throws it too.
export { RunError } from '../check/run.js';

/**
 * Parse a command's flags strictly: an unknown flag, a missing value or a stray argument is a
 * UsageError naming it, followed by the command's usage.
 */
export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: T,
  usage: string,
  positionals = 0,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>> {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${usage}`);
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`unexpected argument "${parsed.positionals[positionals]}".\n\n${usage}`);
  }
  return parsed;
}

export const DEFAULT_URL = 'http://127.0.0.1:4010';

/** The service's origin from --url, checked. */
export function serviceUrl(value: string | undefined): string {
  const given = value ?? process.env.PAYHOOK_REFERENCE_URL ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`--url must be the service's address, such as ${DEFAULT_URL}; got "${given}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--url must start with http:// or https://; got "${given}".`);
  return url.origin;
}

/** The sandbox API key from --api-key (or PAYHOOK_REFERENCE_API_KEY), checked. */
export function sandboxKey(value: string | undefined): string {
  const key = value ?? process.env.PAYHOOK_REFERENCE_API_KEY;
  if (!key)
    throw new UsageError(
      '--api-key is required: pass the sandbox key (sk_test_…) that `payhook-reference serve` printed, or set PAYHOOK_REFERENCE_API_KEY.',
    );
  if (!/^sk_test_[A-Za-z0-9_-]{8,}$/.test(key)) {
    throw new UsageError('--api-key must be a sandbox key (sk_test_ and at least 8 more characters): sandbox control refuses live keys.');
  }
  return key;
}

/** A whole number of seconds from a flag, checked. */
export function seconds(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+(?:\.\d+)?$/.test(value) || !(n > 0) || n > 600)
    throw new UsageError(`--${flag} must be a number of seconds from 0 to 600; got "${value}".`);
  return n;
}

/**
 * Call the service: the parsed JSON body of a 2xx, unwrapped from a `{status: 'success', data}`
 * envelope if the service sends one; a RunError with the service's own message otherwise.
 */
export async function call(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    const c = (error as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
    const cause = c?.code ?? c?.errors?.[0]?.code ?? c?.message ?? (error as Error).message;
    throw new RunError(
      `cannot reach the service at ${base} (${cause}): start it with \`payhook-reference serve\`, or pass its address with --url.`,
    );
  }
  const text = await res.text();
  let value: unknown = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch {
    throw new RunError(`${method} ${path} answered ${res.status} with a body that is not JSON: is ${base} a payhook-reference service?`);
  }
  const envelope = value as { status?: unknown; data?: { message?: unknown } } | null;
  if (!res.ok) {
    const message = typeof envelope?.data?.message === 'string' ? envelope.data.message : text.slice(0, 200);
    throw new RunError(`${method} ${path} failed with ${res.status}: ${message}`);
  }
  return envelope?.status === 'success' && 'data' in envelope ? envelope.data : value;
}

export interface AttemptView {
  number: number;
  status: number | null;
  durationMs: number;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  event: string;
  reference: string;
  url: string | null;
  state: string;
  attempts: AttemptView[];
  nextAttemptAt: string | null;
  error: string | null;
}

/** Settled enough to report: attempted at least once, or never to be attempted. */
export const reported = (d: DeliveryView): boolean =>
  d.attempts.length > 0 || d.state === 'failed' || d.state === 'dropped' || d.state === 'held';

/** One line about a delivery's first answer, for trigger and resend. */
export function describe(d: DeliveryView): string {
  const a = d.attempts.at(-1);
  if (!a) return `${d.id} ${d.event} → not sent: ${d.error ?? d.state}`;
  const answer = a.status !== null ? `${a.status}` : (a.error ?? 'no answer');
  const state = d.state === 'retrying' ? `retrying at ${d.nextAttemptAt}` : d.state;
  return `${d.id} ${d.event} → ${answer} in ${a.durationMs} ms (${state}) ${d.url ?? ''}`.trimEnd();
}

/** Poll until `ready` says the deliveries are all reported, within `timeoutMs`. */
export async function waitFor<T>(
  read: () => Promise<T>,
  ready: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 100,
): Promise<{ value: T; timedOut: boolean }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ready(value)) return { value, timedOut: false };
    if (Date.now() >= until) return { value, timedOut: true };
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

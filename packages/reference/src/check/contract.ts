import { randomBytes, randomUUID } from 'node:crypto';
import type { Hooks } from './receiver.js';
import { compare, preview, type Diff, type Shape } from './shapes.js';
import { ERROR_ENVELOPE } from './spec.js';
import type { Answer, Wire } from './wire.js';

/** What one check found: agreement or differences (with a one-line detail), or why it could not run. */
export type Verdict = { skip: string } | { detail: string; diffs: Diff[] };

export interface Check {
  name: string;
  run(ctx: Ctx): Promise<Verdict>;
}

export interface Ctx {
  wire: Wire;
  /** Unique per run: in merchant references, so a run's transactions are its own. */
  runId: string;
  /** Where the service can deliver webhooks to this process, or why it cannot. */
  hooks: Hooks | { skip: string };
  webhookSecret: string | undefined;
  webhookTimeoutMs: number;
  /** Drive the key into 429 at the end (--rate-limit). */
  rateLimit: boolean;
  /** Results shared between checks (a transaction made once, used by several). */
  memo: Map<string, Promise<unknown>>;
}

/** Thrown inside a check: it cannot run (the row is "skipped" with this reason, not a difference). */
export class Skip extends Error {}

/** `fn` run once per run under `key`, its promise shared. */
export function once<T>(ctx: Ctx, key: string, fn: () => Promise<T>): Promise<T> {
  if (!ctx.memo.has(key)) ctx.memo.set(key, fn());
  return ctx.memo.get(key) as Promise<T>;
}

let made = 0;
/** An initialize body as both SDKs send it (two decimals, upper-case currency, +251 phone). */
export const initializeBody = (ctx: Ctx, extra: Record<string, unknown> = {}) => ({
  amount: '100.00',
  currencyCode: 'ETB',
  customerPhone: '+251911234567',
  merchantReference: `payhook-check-${ctx.runId}-${++made}`,
  ...extra,
});

/** POST initialize with a fresh idempotency key (as the SDKs do when given none). */
export const initialize = (ctx: Ctx, body: Record<string, unknown>, idempotencyKey: string = randomUUID()) =>
  ctx.wire.send('POST', '/v1/transactions/initialize', { body, headers: { 'x-idempotency-key': idempotencyKey } });

/**
 * Initialize with the run's callback URL when there is one. A service that refuses it (the interface
 * allows only HTTPS) gets a second initialize without it; `refused` then says why, and the webhook
 * round trips are skipped.
 */
export async function initializeWithCallback(ctx: Ctx): Promise<{ answer: Answer; refused: string | null }> {
  if (!('url' in ctx.hooks)) return { answer: await initialize(ctx, initializeBody(ctx)), refused: null };
  const answer = await initialize(ctx, initializeBody(ctx, { callbackUrl: ctx.hooks.url }));
  if (answer.status !== 400) return { answer, refused: null };
  return { answer: await initialize(ctx, initializeBody(ctx)), refused: said(answer) };
}

/** The reference of a 2xx initialize answer, or Skip (a check that needs a transaction cannot run). */
export function referenceOf(a: Answer): string {
  const reference = (a.json as { reference?: unknown } | undefined)?.reference;
  if (a.status < 200 || a.status > 299 || typeof reference !== 'string') {
    throw new Skip(`needs a transaction, and ${a.request} answered ${a.status} ${a.text.slice(0, 80)}`);
  }
  return reference;
}

/** One transaction for the read checks (retrieve, verify, timeline), made once per run. */
export const sharedTransaction = (ctx: Ctx) =>
  once(ctx, 'shared', async () => {
    const body = initializeBody(ctx);
    const answer = await initialize(ctx, body);
    return { answer, body };
  });

/** A reference no transaction has: well formed (P + 8 hex + today), random. */
export const unknownReference = () =>
  `P${randomBytes(4).toString('hex').toUpperCase()}${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;

export const eq = (at: string, expected: unknown, got: unknown): Diff[] =>
  expected === got ? [] : [{ at, expected: typeof expected === 'string' ? JSON.stringify(expected) : shown(expected), got: preview(got) }];

/** A field's value in a row's detail: a string as it is, anything else in a few words (`absent`, never `undefined`). */
export const shown = (value: unknown): string => (typeof value === 'string' ? value : preview(value));

/** The HTTP status: an exact code, or any 2xx. */
export function statusIs(a: Answer, expected: number | '2xx'): Diff[] {
  const ok = expected === '2xx' ? a.status >= 200 && a.status <= 299 : a.status === expected;
  return ok ? [] : [{ at: 'HTTP status', expected: String(expected), got: `${a.status}${a.text ? ` ${a.text.slice(0, 80)}` : ''}` }];
}

/** The body against a shape; a body that is not JSON is one difference. */
export function bodyIs(a: Answer, shape: Shape): Diff[] {
  if (a.json === undefined) return [{ at: '(body)', expected: 'JSON', got: a.text === '' ? 'empty' : preview(a.text) }];
  return compare(a.json, shape);
}

/** A failure in the interface's envelope (2.4) with `status`, its message containing `includes`. */
export function errorIs(a: Answer, status: number, includes?: string): Diff[] {
  const diffs = statusIs(a, status);
  if (diffs.length > 0) return diffs;
  diffs.push(...bodyIs(a, ERROR_ENVELOPE));
  const message = (a.json as { data?: { message?: unknown } } | undefined)?.data?.message;
  if (includes !== undefined && typeof message === 'string' && !message.toLowerCase().includes(includes.toLowerCase())) {
    diffs.push({ at: 'data.message', expected: `a message naming ${JSON.stringify(includes)}`, got: preview(message) });
  }
  return diffs;
}

/** `POST /v1/… → 400 "message"`: what a row's detail says about an answer. */
export function said(a: Answer): string {
  const message = (a.json as { data?: { message?: unknown } } | undefined)?.data?.message;
  const text = typeof message === 'string' ? ` "${message.length > 60 ? `${message.slice(0, 59)}…` : message}"` : '';
  return `${a.request.replace(/\?.*$/, '?…')} → ${a.status}${text}`;
}

/** Prefix each difference's path with a probe's label, for rows that send several requests. */
export const under = (label: string, diffs: Diff[]): Diff[] => diffs.map((d) => ({ ...d, at: `[${label}] ${d.at}` }));

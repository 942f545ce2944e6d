import { randomBytes, randomUUID } from 'node:crypto';
import {
  bodyIs,
  eq,
  errorIs,
  initialize,
  initializeBody,
  initializeWithCallback,
  once,
  referenceOf,
  said,
  sharedTransaction,
  shown,
  statusIs,
  under,
  unknownReference,
  type Check,
  type Ctx,
} from './contract.js';
import { INITIALIZED, TIMELINE, TRANSACTION } from './spec.js';

/** An initialize that must fail with 400 (interface section 7, per endpoint). */
const badInitialize = (name: string, probes: Record<string, Record<string, unknown>>): Check => ({
  name,
  async run(ctx) {
    const answers = await Promise.all(Object.values(probes).map((fields) => initialize(ctx, initializeBody(ctx, fields))));
    const labels = Object.keys(probes);
    return { detail: answers.map(said).join('; '), diffs: answers.flatMap((a, i) => under(labels[i]!, errorIs(a, 400))) };
  },
});

/** The transaction the cancel checks and the payment.cancelled round trip share, with the callback URL when there is one. */
export const cancelledTransaction = (ctx: Ctx) =>
  once(ctx, 'cancel', async () => {
    const { answer, refused } = await initializeWithCallback(ctx);
    const reference = referenceOf(answer);
    const cancel = await ctx.wire.send('POST', `/v1/transactions/${reference}/cancel`);
    return { reference, cancel, refused };
  });

export const API_CHECKS: Check[] = [
  {
    name: 'auth: no Authorization header → 401',
    async run({ wire }) {
      const a = await wire.send('GET', '/v1/transactions', { key: null });
      return { detail: said(a), diffs: errorIs(a, 401) };
    },
  },
  {
    name: 'auth: unknown sandbox key → 401',
    async run({ wire }) {
      const a = await wire.send('GET', '/v1/transactions', { key: `sk_test_${randomBytes(16).toString('hex')}` });
      return { detail: said(a), diffs: errorIs(a, 401) };
    },
  },
  {
    name: 'initialize → 2xx {reference, checkoutUrl, status, expiresAt}',
    async run(ctx) {
      const { answer } = await sharedTransaction(ctx);
      return { detail: said(answer), diffs: [...statusIs(answer, '2xx'), ...bodyIs(answer, INITIALIZED)] };
    },
  },
  {
    name: 'initialize: same x-idempotency-key → same answer',
    async run(ctx) {
      const body = initializeBody(ctx);
      const key = `payhook-check-${randomUUID()}`;
      const first = await initialize(ctx, body, key);
      const again = await initialize(ctx, body, key);
      const ref = (a: typeof first) => (a.json as { reference?: unknown } | undefined)?.reference;
      const diffs = [
        ...under('first', statusIs(first, '2xx')),
        ...under('replay', statusIs(again, '2xx')),
        ...eq('replay reference', ref(first), ref(again)),
      ];
      if (diffs.length === 0 && JSON.stringify(first.json) !== JSON.stringify(again.json)) {
        diffs.push({ at: 'replay body', expected: first.text.slice(0, 120), got: again.text.slice(0, 120) });
      }
      const detail =
        typeof ref(first) === 'string' && ref(first) === ref(again)
          ? `${shown(ref(first))} twice (${first.status}, ${again.status})`
          : `${said(first)}, reference ${shown(ref(first))}; replay → ${again.status}, reference ${shown(ref(again))}`;
      return { detail, diffs };
    },
  },
  badInitialize('initialize: bad amount → 400', {
    'amount -5.00': { amount: '-5.00' },
    'amount 1000000000.00': { amount: '1000000000.00' },
  }),
  badInitialize('initialize: bad currencyCode → 400', { 'currencyCode XYZ': { currencyCode: 'XYZ' } }),
  badInitialize('initialize: bad customerPhone → 400', { 'customerPhone 12345': { customerPhone: '12345' } }),
  {
    name: 'retrieve → 2xx Transaction',
    async run(ctx) {
      const { answer, body } = await sharedTransaction(ctx);
      const reference = referenceOf(answer);
      const a = await ctx.wire.send('GET', `/v1/transactions/${reference}`);
      const got = a.json as Record<string, unknown> | undefined;
      const diffs = [...statusIs(a, '2xx'), ...bodyIs(a, TRANSACTION)];
      if (diffs.length === 0)
        diffs.push(
          ...eq('reference', reference, got?.reference),
          ...eq('merchantReference', body.merchantReference, got?.merchantReference),
        );
      return { detail: `${said(a)} (status ${shown(got?.status)})`, diffs };
    },
  },
  {
    name: 'verify before completion → 400 naming the status',
    async run(ctx) {
      const reference = referenceOf((await sharedTransaction(ctx)).answer);
      const current = (await ctx.wire.send('GET', `/v1/transactions/${reference}`)).json as { status?: unknown } | undefined;
      const a = await ctx.wire.send('GET', `/v1/transactions/${reference}/verify`);
      return { detail: said(a), diffs: errorIs(a, 400, typeof current?.status === 'string' ? current.status : undefined) };
    },
  },
  {
    name: 'timeline → 2xx {reference, events[]}',
    async run(ctx) {
      const reference = referenceOf((await sharedTransaction(ctx)).answer);
      const a = await ctx.wire.send('GET', `/v1/transactions/${reference}/timeline`);
      const diffs = [...statusIs(a, '2xx'), ...bodyIs(a, TIMELINE)];
      if (diffs.length === 0) diffs.push(...eq('reference', reference, (a.json as { reference?: unknown }).reference));
      return { detail: `${said(a)} (events: ${(a.json as { events?: unknown[] } | undefined)?.events?.length ?? 0})`, diffs };
    },
  },
  {
    name: 'unknown reference → 404 (retrieve, verify, cancel, timeline)',
    async run({ wire }) {
      const reference = unknownReference();
      const probes = [
        ['retrieve', 'GET', ''],
        ['verify', 'GET', '/verify'],
        ['cancel', 'POST', '/cancel'],
        ['timeline', 'GET', '/timeline'],
      ] as const;
      const answers = await Promise.all(probes.map(([, method, tail]) => wire.send(method, `/v1/transactions/${reference}${tail}`)));
      return {
        detail: `${reference}: ${answers.map((a) => a.status).join(', ')}`,
        diffs: answers.flatMap((a, i) => under(probes[i]![0], errorIs(a, 404))),
      };
    },
  },
  {
    name: 'cancel a pending transaction → 2xx, then cancelled',
    async run(ctx) {
      const { reference, cancel } = await cancelledTransaction(ctx);
      const after = await ctx.wire.send('GET', `/v1/transactions/${reference}`);
      const status = (after.json as { status?: unknown } | undefined)?.status;
      return {
        detail: `${said(cancel)}; then status ${shown(status)}`,
        diffs: [...statusIs(cancel, '2xx'), ...eq('status after cancel', 'cancelled', status)],
      };
    },
  },
  {
    name: 'cancel twice → 400',
    async run(ctx) {
      const { reference } = await cancelledTransaction(ctx);
      const a = await ctx.wire.send('POST', `/v1/transactions/${reference}/cancel`);
      return { detail: said(a), diffs: errorIs(a, 400) };
    },
  },
];

import { createHmac, timingSafeEqual } from 'node:crypto';
import { cancelledTransaction } from './checks-api.js';
import { bodyIs, eq, initializeWithCallback, once, referenceOf, said, shown, Skip, statusIs, type Check, type Ctx } from './contract.js';
import type { Delivery, Hooks } from './receiver.js';
import { compare, type Diff } from './shapes.js';
import { type EVENTS, SIGNATURE, SIGNATURE_HEADERS, VERIFIED, webhookEvent } from './spec.js';

const HINT =
  'pass --callback <public https URL> --listen <port> (a tunnel to this machine), or run the check on the machine the service runs on';

const refusal = (hooks: Hooks, refused: string) =>
  `the service refused the callback URL ${hooks.url} (${refused}; the interface allows only HTTPS): pass --callback <public https URL> --listen <port>, or serve the reference with --allow-http-callbacks`;

/** The run's webhook receiver, or Skip saying why the service cannot reach one. */
function hooksOf(ctx: Ctx): Hooks {
  if (!('url' in ctx.hooks)) throw new Skip(`${ctx.hooks.skip}: ${HINT}`);
  return ctx.hooks;
}

/**
 * A payment completed, when the service lets a sandbox caller complete one without a person: the
 * reference service's sandbox control (`POST /_sandbox/transactions/:reference/pay`, see its README).
 * ePay documents no such endpoint (its test phones complete at checkout), so there this is skipped.
 */
const paidTransaction = (ctx: Ctx) =>
  once(ctx, 'paid', async () => {
    const { answer, refused } = await initializeWithCallback(ctx);
    const reference = referenceOf(answer);
    const pay = await ctx.wire.send('POST', `/_sandbox/transactions/${reference}/pay`);
    if (pay.status < 200 || pay.status > 299) {
      throw new Skip(
        `no completed payment without a person (${said(pay)}: no sandbox control); open a checkoutUrl and pay with test phone 251900000001, OTP 123456, to see it by hand`,
      );
    }
    return { reference, refused };
  });

/** The delivery's method, headers, signature and payload against the contract (interface 4 and 5.5). */
function deliveryDiffs(
  d: Delivery,
  event: (typeof EVENTS)[number],
  reference: string,
  status: string,
  secret: string | undefined,
): { diffs: Diff[]; signed: string } {
  const diffs: Diff[] = [...eq('method', 'POST', d.method)];
  const type = String(d.headers['content-type'] ?? '');
  if (!type.toLowerCase().startsWith('application/json'))
    diffs.push({ at: 'header Content-Type', expected: 'application/json', got: type || 'absent' });
  const name = SIGNATURE_HEADERS.find((h) => d.headers[h.toLowerCase()] !== undefined);
  const value = name ? String(d.headers[name.toLowerCase()]) : undefined;
  let signed = 'signature not checked (pass --webhook-secret)';
  if (!name || !SIGNATURE.test(value!)) {
    diffs.push({
      at: `header ${name ?? 'X-Service-Signature'}`,
      expected: 'sha256=<64 lower-case hex> (X-Service-Signature or X-Epay-Signature)',
      got: value ?? 'absent',
    });
  } else if (secret !== undefined) {
    const want = Buffer.from(`sha256=${createHmac('sha256', secret).update(d.body).digest('hex')}`);
    const ok = want.length === Buffer.byteLength(value!) && timingSafeEqual(want, Buffer.from(value!));
    if (!ok) diffs.push({ at: `header ${name}`, expected: 'HMAC-SHA256 of the raw body keyed with --webhook-secret', got: value! });
    signed = `${name} verified`;
  } else signed = `${name} well formed, ${signed}`;
  diffs.push(
    ...(d.json === undefined
      ? [{ at: '(body)', expected: 'JSON', got: `${d.body.length} bytes, not JSON` }]
      : compare(d.json, webhookEvent(event, reference, status))),
  );
  return { diffs, signed };
}

async function roundTrip(ctx: Ctx, hooks: Hooks, event: (typeof EVENTS)[number], reference: string, status: string) {
  const d = await hooks.wait(event, reference, ctx.webhookTimeoutMs);
  if (!d) {
    const others = hooks.deliveries
      .filter((x) => (x.json as { reference?: unknown } | undefined)?.reference === reference)
      .map((x) => shown((x.json as { event?: unknown }).event));
    return {
      detail: `no ${event} within ${ctx.webhookTimeoutMs / 1000} s`,
      diffs: [
        {
          at: 'delivery',
          expected: `a POST of ${event} for ${reference} to ${hooks.url}`,
          got: others.length ? `only ${others.join(', ')}` : 'nothing',
        },
      ],
    };
  }
  const { diffs, signed } = deliveryDiffs(d, event, reference, status, ctx.webhookSecret);
  return { detail: `${event} for ${reference} received; ${signed}`, diffs };
}

export const WEBHOOK_CHECKS: Check[] = [
  {
    name: 'webhook: cancel → signed payment.cancelled round trip',
    async run(ctx) {
      const hooks = hooksOf(ctx);
      const { reference, cancel, refused } = await cancelledTransaction(ctx);
      if (refused) throw new Skip(refusal(hooks, refused));
      if (statusIs(cancel, '2xx').length > 0) throw new Skip(`cancel answered ${cancel.status}`);
      return roundTrip(ctx, hooks, 'payment.cancelled', reference, 'cancelled');
    },
  },
  {
    name: 'verify a completed payment → 2xx VerifiedPayment',
    async run(ctx) {
      const { reference } = await paidTransaction(ctx);
      const a = await ctx.wire.send('GET', `/v1/transactions/${reference}/verify`);
      const diffs = [...statusIs(a, '2xx'), ...bodyIs(a, VERIFIED)];
      if (diffs.length === 0) diffs.push(...eq('reference', reference, (a.json as { reference?: unknown }).reference));
      return { detail: said(a), diffs };
    },
  },
  {
    name: 'webhook: payment → signed payment.success round trip',
    async run(ctx) {
      const hooks = hooksOf(ctx);
      const { reference, refused } = await paidTransaction(ctx);
      if (refused) throw new Skip(refusal(hooks, refused));
      return roundTrip(ctx, hooks, 'payment.success', reference, 'completed');
    },
  },
];

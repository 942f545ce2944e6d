import { randomUUID } from 'node:crypto';
import type { PaymentEventName } from '@payhook/core';
import { EVENT_NAMES, type Action } from '@payhook/core/lifecycle';
import {
  call,
  describe,
  parseFlags,
  reported,
  RunError,
  sandboxKey,
  seconds,
  serviceUrl,
  UsageError,
  waitFor,
  type DeliveryView,
} from './common.js';

/** The initialize fields --data may set. */
const FIELDS = [
  'amount',
  'currencyCode',
  'customerPhone',
  'merchantReference',
  'email',
  'firstName',
  'lastName',
  'callbackUrl',
  'returnUrl',
] as const;

export const TRIGGER_USAGE = `Usage: payhook-reference trigger <event> [options]

Creates a sandbox transaction on a running service (initialize with the sandbox key), then moves
it with sandbox control so the service sends <event> to the callback URL, and prints the
reference and each delivery's outcome.

Events:
  payment.success     pay
  payment.failed      fail
  payment.cancelled   cancel
  payment.refunding   pay, refund
  payment.refunded    pay, refund, complete-refund
  payment.reversed    pay, reverse

Options:
  --url <service>         The service (default http://127.0.0.1:4010, or PAYHOOK_REFERENCE_URL)
  --api-key <key>         A sandbox key, sk_test_… (default: PAYHOOK_REFERENCE_API_KEY)
  --callback-url <url>    Where to send the webhooks (default: the merchant's global callback URL)
  --data <key=value>      Override an initialize field; repeatable. Fields:
                          ${FIELDS.join(', ')}
  --timeout <seconds>     How long to wait for the deliveries' first answers (default 15)
  -h, --help              Show this help

Example:
  payhook-reference trigger payment.success --api-key sk_test_… --data amount=12.50
`;

/** The sandbox moves that make the service send each event, in order. */
export const STEPS: Record<PaymentEventName, Action[]> = {
  'payment.success': ['pay'],
  'payment.failed': ['fail'],
  'payment.cancelled': ['cancel'],
  'payment.refunding': ['pay', 'refund'],
  'payment.refunded': ['pay', 'refund', 'complete-refund'],
  'payment.reversed': ['pay', 'reverse'],
};

export async function trigger(argv: string[], out: (line: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    {
      url: { type: 'string' },
      'api-key': { type: 'string' },
      'callback-url': { type: 'string' },
      data: { type: 'string', multiple: true },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    TRIGGER_USAGE,
    1,
  );
  if (values.help) {
    out(TRIGGER_USAGE);
    return 0;
  }
  const event = positionals[0];
  if (!event) throw new UsageError(`name the event to trigger: one of ${EVENT_NAMES.join(', ')}.\n\n${TRIGGER_USAGE}`);
  if (!(EVENT_NAMES as readonly string[]).includes(event))
    throw new UsageError(`unknown event "${event}": use one of ${EVENT_NAMES.join(', ')}.`);
  const base = serviceUrl(values.url);
  const key = sandboxKey(values['api-key']);
  const timeoutMs = seconds('timeout', values.timeout, 15) * 1000;
  const input: Record<string, string> = {
    amount: '100.00',
    currencyCode: 'ETB',
    customerPhone: '0912345678',
    merchantReference: `trigger-${event.replace('payment.', '')}-${Date.now()}`,
  };
  if (values['callback-url'] !== undefined) input.callbackUrl = values['callback-url'];
  for (const pair of values.data ?? []) {
    const eq = pair.indexOf('=');
    const field = pair.slice(0, eq);
    if (eq <= 0) throw new UsageError(`--data takes key=value, such as --data amount=12.50; got "${pair}".`);
    if (!(FIELDS as readonly string[]).includes(field))
      throw new UsageError(`--data cannot set "${field}": use one of ${FIELDS.join(', ')}.`);
    input[field] = pair.slice(eq + 1);
  }

  const created = (await call(base, key, 'POST', '/v1/transactions/initialize', input, { 'x-idempotency-key': randomUUID() })) as {
    reference?: string;
  };
  const reference = created?.reference;
  if (typeof reference !== 'string') throw new RunError(`initialize answered without a reference: is ${base} a payhook-reference service?`);
  out(`Created ${reference} (${input.amount} ${input.currencyCode}, order ${input.merchantReference})`);
  const path = `/_sandbox/deliveries?reference=${encodeURIComponent(reference)}`;
  const until = Date.now() + timeoutMs;
  let deliveries: DeliveryView[] = [];
  let timedOut = false;
  const steps = STEPS[event as PaymentEventName];
  for (const [i, action] of steps.entries()) {
    const moved = (await call(base, key, 'POST', `/_sandbox/transactions/${encodeURIComponent(reference)}/${action}`)) as {
      status?: string;
    };
    out(`  ${action} → ${moved?.status ?? 'done'}`);
    // Each event's first answer before the next move, so the receiver sees them in the order of the payment's life.
    ({ value: deliveries, timedOut } = await waitFor(
      async () => (await call(base, key, 'GET', path)) as DeliveryView[],
      (list) => list.length >= i + 1 && list.every(reported),
      Math.max(0, until - Date.now()),
    ));
  }
  out('Deliveries:');
  for (const d of deliveries) out(`  ${reported(d) ? describe(d) : `${d.id} ${d.event} → no answer yet`}`);
  const target = deliveries.find((d) => d.event === event && d.attempts.some((a) => a.error === null));
  if (target) {
    out(`Triggered ${event} for ${reference}.`);
    return 0;
  }
  const last = [...deliveries].reverse().find((d) => d.event === event);
  const why = timedOut ? `no answer within ${timeoutMs / 1000} s` : last ? describe(last) : 'no delivery was recorded';
  throw new RunError(
    `the ${event} delivery for ${reference} was not accepted (${why}). Check your endpoint and the serve log; the service retries it, or run \`payhook-reference resend ${last?.id ?? '<delivery-id>'}\`.`,
  );
}

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

export const RESEND_USAGE = `Usage: payhook-reference resend <delivery-id> [options]

Asks a running service to deliver a webhook again: the same bytes and signature, as a new
delivery (with its own retries). Delivery ids (dlv_…) are in serve's live log, trigger's output
and the dashboard.

Options:
  --url <service>         The service (default http://127.0.0.1:4010, or PAYHOOK_REFERENCE_URL)
  --api-key <key>         A sandbox key, sk_test_… (default: PAYHOOK_REFERENCE_API_KEY)
  --timeout <seconds>     How long to wait for the first answer (default 15)
  -h, --help              Show this help
`;

export async function resend(argv: string[], out: (line: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { url: { type: 'string' }, 'api-key': { type: 'string' }, timeout: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    RESEND_USAGE,
    1,
  );
  if (values.help) {
    out(RESEND_USAGE);
    return 0;
  }
  const id = positionals[0];
  if (!id) throw new UsageError(`name the delivery to resend, such as dlv_1.\n\n${RESEND_USAGE}`);
  if (!/^dlv_\d+$/.test(id))
    throw new UsageError(`"${id}" is not a delivery id: they look like dlv_1 (see serve's live log or trigger's output).`);
  const base = serviceUrl(values.url);
  const key = sandboxKey(values['api-key']);
  const timeoutMs = seconds('timeout', values.timeout, 15) * 1000;

  const copy = (await call(base, key, 'POST', `/_sandbox/deliveries/${id}/resend`)) as DeliveryView;
  out(`Resent ${id} as ${copy.id} (${copy.event} for ${copy.reference})`);
  const { value: d, timedOut } = await waitFor(
    async () => (await call(base, key, 'GET', `/_sandbox/deliveries/${copy.id}`)) as DeliveryView,
    reported,
    timeoutMs,
  );
  out(`  ${reported(d) ? describe(d) : `${d.id} ${d.event} → no answer yet`}`);
  if (d.attempts.some((a) => a.error === null)) return 0;
  throw new RunError(
    `${d.id} was not accepted (${timedOut ? `no answer within ${timeoutMs / 1000} s` : describe(d)}): check your endpoint; the service retries it on its schedule.`,
  );
}

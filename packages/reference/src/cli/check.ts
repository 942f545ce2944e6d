import { formatReport, maskKey, printable, redactor } from '../check/print.js';
import { runContract } from '../check/run.js';
import { KeyRefused, statusAndMessage } from '../check/wire.js';
import { parseFlags, RunError, seconds, UsageError } from './common.js';

/** The exit codes of `check`, as its help and the README give them. */
export const CHECK_EXIT = { agree: 0, differs: 1, usage: 2, keyRefused: 3 } as const;

export const CHECK_USAGE = `Usage: payhook-reference check <base-url> --key <sk_test_…> [options]

Runs the payment service's black-box contract against <base-url> over plain HTTP, reading only
what the service sends: every endpoint's success and error shapes, paging to the end, idempotent
replays, rate-limit headers, and webhook round trips where the service can reach a callback. It
prints a table of agreements and differences, each difference as expected vs got. It makes
sandbox transactions (about 15) and refuses a live key.

<base-url> is the service's address, with or without /v1: http://127.0.0.1:4010 for
\`payhook-reference serve\`, or the sandbox API root ePay gives you.

Options:
  --key <sk_test_…>            A sandbox key (default: EPAY_SECRET_KEY); a live key (sk_live_…) is refused
  --webhook-secret <secret>    Check each webhook's signature with it (default: EPAY_WEBHOOK_SECRET)
  --callback <url>             A public URL that reaches --listen (a tunnel): the callback URL for a
                               service that is not on this machine. On loopback one is made for you
  --listen <[host:]port>       Where to receive webhooks sent to --callback (host default 127.0.0.1)
  --timeout <seconds>          Per request (default 15)
  --webhook-timeout <seconds>  How long to wait for each webhook (default 30)
  --rate-limit                 Last, spend the key's 100 requests per 60 s and check the 429
  -h, --help                   Show this help

Exit codes:
  0  every check agrees (skipped ones aside)
  1  a difference, or the service cannot be reached
  2  a bad command line (a live key too)
  3  the service refused the key (401, or 403 to its first request): no check ran past it. One line
     says which request and what the service said; check --key or EPAY_SECRET_KEY

What the service sends is printed with control characters written out (\\x1b, \\u202e), and the
key or webhook secret, if the service echoes them, masked (sk_test_…).

Examples:
  payhook-reference check http://127.0.0.1:4010 --key sk_test_… --webhook-secret whsec_…
  payhook-reference check https://<sandbox API root> --key sk_test_… --callback https://<tunnel>/hook --listen 4020
`;

/** The base URL without a trailing `/` or `/v1`: the checks add `/v1/…`. */
function baseUrl(value: string | undefined): string {
  if (!value) throw new UsageError(`name the service to check: payhook-reference check <base-url> --key <sk_test_…>.\n\n${CHECK_USAGE}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`<base-url> must be the service's address, such as http://127.0.0.1:4010; got "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`<base-url> must start with http:// or https://; got "${value}".`);
  if (url.search || url.hash || url.username || url.password)
    throw new UsageError(`<base-url> must have no query, fragment or credentials; got "${value}".`);
  return url.origin + url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** The sandbox key; a live key is refused before any request is made. */
function checkKey(value: string | undefined): string {
  const key = value ?? process.env.EPAY_SECRET_KEY;
  if (!key) throw new UsageError(`--key is required: a sandbox key, sk_test_… (or set EPAY_SECRET_KEY).\n\n${CHECK_USAGE}`);
  if (key.startsWith('sk_live_')) throw new UsageError('check refuses a live key (sk_live_…): pass a sandbox key (sk_test_…)');
  if (!/^sk_test_[\x21-\x7e]+$/.test(key))
    throw new UsageError('--key must be a sandbox key: sk_test_ followed by the rest of the key (printable ASCII, no spaces).');
  return key;
}

function listenAddress(value: string): { host: string; port: number } {
  const m = /^(?:(.+):)?(\d{1,5})$/.exec(value);
  const port = Number(m?.[2]);
  if (!m || port > 65535) throw new UsageError(`--listen must be a port or host:port, such as 4020 or 127.0.0.1:4020; got "${value}".`);
  return { host: (m[1] ?? '127.0.0.1').replace(/^\[|\]$/g, ''), port };
}

export async function check(argv: string[], out: (text: string) => void, err: (text: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    {
      key: { type: 'string' },
      'webhook-secret': { type: 'string' },
      callback: { type: 'string' },
      listen: { type: 'string' },
      timeout: { type: 'string' },
      'webhook-timeout': { type: 'string' },
      'rate-limit': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    CHECK_USAGE,
    1,
  );
  if (values.help) {
    out(CHECK_USAGE);
    return 0;
  }
  const base = baseUrl(positionals[0]);
  const key = checkKey(values.key);
  if ((values.callback === undefined) !== (values.listen === undefined)) {
    throw new UsageError('--callback and --listen go together: the public URL, and the local port it reaches.');
  }
  if (values.callback !== undefined && !/^https?:\/\/\S+$/.test(values.callback)) {
    throw new UsageError(`--callback must be an http(s) URL; got "${values.callback}".`);
  }
  const webhookSecret = values['webhook-secret'] ?? process.env.EPAY_WEBHOOK_SECRET;
  // Everything printed, progress and errors too, masks the secrets and writes control characters out.
  const redact = redactor([key, webhookSecret]);
  const run = runContract({
    base,
    key,
    webhookSecret,
    callback: values.callback,
    listen: values.listen === undefined ? undefined : listenAddress(values.listen),
    timeoutMs: seconds('timeout', values.timeout, 15) * 1000,
    webhookTimeoutMs: seconds('webhook-timeout', values['webhook-timeout'], 30) * 1000,
    rateLimit: values['rate-limit'] ?? false,
    note: (line) => err(`  … ${printable(line, redact)}\n`),
    redact,
  });
  const rows = await run.catch((error: unknown) => {
    if (error instanceof KeyRefused) throw new RunError(printable(refusedKey(error, key), redact), CHECK_EXIT.keyRefused);
    if (error instanceof RunError) throw new RunError(printable(error.message, redact), error.exitCode);
    throw error;
  });
  out(formatReport(base, key, rows, redact));
  return rows.some((r) => r.outcome === 'differs') ? CHECK_EXIT.differs : CHECK_EXIT.agree;
}

/** The one line for a refused key: which request, what the service said, what to do. */
function refusedKey({ answer, accepted }: KeyRefused, key: string): string {
  const said = `${answer.request.replace(/\?.*$/, '?…')} answered ${statusAndMessage(answer)}`;
  const other = 'with --key (or EPAY_SECRET_KEY)';
  const [why, fix] =
    answer.status === 403
      ? [
          'the service knows the key but refuses it this request (a permission it lacks, or an IP allow-list without this machine)',
          `Give the key every permission and allow this machine, or pass another ${other}`,
        ]
      : [
          accepted > 0
            ? `it had accepted the key for ${accepted} requests: was it revoked during the run?`
            : 'it is not a key of this service, or it is revoked',
          `Pass the sandbox secret key of your merchant account on this service ${other}`,
        ];
  return `the service refused the key ${maskKey(key)}: ${said}; ${why}. ${fix}. The check stopped at the refusal.`;
}

import { describe, expect, it } from 'vitest';
import { runCli, service } from './check-helpers.js';

/*
 * `payhook-reference check` against a hostile sandbox (issue 51, §3.7 and §3.8): what the service
 * sends reaches neither stdout nor stderr as a terminal sequence, and the key (and webhook secret)
 * it echoes back, in any form, is masked everywhere.
 */

const KEY = 'sk_test_hostile+key/echo=0001';
const WEBHOOK_SECRET = 'whsec_hostile_echo_secret_01';
/** A clipboard write (OSC 52), a screen clear, a bidi override, a C1 CSI, a lone surrogate and a line break (a forged line). */
const SEQUENCES = '\u001b]52;c;cGF5aG9vaw==\u0007\u001b[2J\u202e\u009b\ud800\r\n';
const WRITTEN_OUT = '\\x1b]52;c;cGF5aG9vaw==\\x07\\x1b[2J\\u202e\\x9b\\ud800\\x0d\\x0a';
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Every form of the key the service sends back, none of which may be printed. */
const ECHOES = {
  raw: KEY,
  'percent-encoded': encodeURIComponent(KEY),
  'percent-encoded, lower case': encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
  'JSON-escaped': KEY.replace('/', '\\/'),
  base64: b64(KEY).replace(/=+$/, ''),
  'base64 of Basic auth': b64(`${KEY}:`).replace(/=+$/, ''),
  'webhook secret': WEBHOOK_SECRET,
};

/**
 * Initialize answers a transaction whose reference carries the sequences and the key; every other
 * request to a transaction is answered 429 once (so `check` prints a progress note naming it), then
 * an error whose message, raw body and rate-limit headers echo the key in every form.
 */
async function hostile(): Promise<string> {
  const limited = new Set<string>();
  // The rate-limit row prints the first 5 count headers that are not numbers (in name order).
  const headers = {
    'content-type': 'application/json',
    'ratelimit-limit': ECHOES['percent-encoded'],
    'ratelimit-remaining': ECHOES['percent-encoded, lower case'],
    'ratelimit-reset': ECHOES.base64,
    'x-ratelimit-limit': ECHOES['base64 of Basic auth'],
    'x-ratelimit-remaining': WEBHOOK_SECRET,
  };
  // Within the 80 characters a row shows of a body.
  const message = `${ECHOES['JSON-escaped']} ${WEBHOOK_SECRET} ${JSON.stringify(SEQUENCES).slice(1, -1)}`;
  return service((req, _body, res) => {
    const url = req.url ?? '';
    if (req.method === 'POST' && url === '/v1/transactions/initialize') {
      const reference = `P${SEQUENCES}${KEY}`;
      res.writeHead(200, headers).end(
        JSON.stringify({
          reference,
          checkoutUrl: `https://pay.example/${SEQUENCES}`,
          status: 'success',
          expiresAt: '2030-01-01T00:00:00Z',
        }),
      );
    } else if (url.startsWith('/v1/transactions/P') && !limited.has(url)) {
      limited.add(url);
      res.writeHead(429, { ...headers, 'retry-after': '0' }).end(`{"status":"error","data":{"message":"${message}"}}`);
    } else {
      res.writeHead(400, headers).end(`{"status":"error","data":{"message":"${message}"}}`);
    }
  });
}

describe('payhook-reference check against a hostile service', () => {
  it("writes the service's control, bidi and lone-surrogate characters out on stdout and stderr, and masks the key it echoes", async () => {
    const url = await hostile();
    const run = await runCli(['check', url, '--key', KEY, '--webhook-secret', WEBHOOK_SECRET, '--webhook-timeout', '0.2']);
    expect(run.code, run.output).toBe(1);
    // The progress notes (stderr) name the request, the reference in it written out and masked.
    expect(run.stderr).toContain(`  … GET /v1/transactions/P${WRITTEN_OUT}sk_test_…0001 answered 429: waiting 0 s`);
    // The report (stdout) too, and nothing anywhere is raw.
    expect(run.stdout).toContain(WRITTEN_OUT);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters that must never reach the terminal
    expect(run.output).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e\ufffd]/);
    const printed = Object.entries(ECHOES).filter(([, echo]) => run.output.includes(echo));
    expect(
      printed.map(([form]) => form),
      run.output,
    ).toEqual([]);
    expect(run.output).toContain('sk_test_…0001');
    expect(run.output).toContain('whsec_…t_01');
  });
});

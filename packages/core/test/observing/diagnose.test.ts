import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEvent, signedBody } from '@payhook/testing';
import { bodyArb, FUZZ_SEED, fuzzRuns } from '@payhook/test-support/hostile-bodies';
import { createReceiver, createVerifier, sign, type DeliveryReport, type ReceiverOptions } from '../../src/index.js';
import { adapterOf } from '../../src/adapter.js';
import { createDiagnosis, headerDefect } from '../../src/observing/diagnose.js';

const secret = 'whsec_diagnose_test';
const url = 'http://127.0.0.1/webhooks';
/** The receiver fuzz's secret (test/security/fuzz/cases.ts), for the same cases. */
const FUZZ_SECRET = 'whsec_fuzz_secret_value';

/** A receiver whose log lines are kept, and a way to post raw bytes with any signature header. */
function setup(options: Partial<ReceiverOptions> = {}) {
  const lines: { level: string; message: string; fields: DeliveryReport }[] = [];
  const receiver = createReceiver({
    secret,
    logger: (level, fields, message) => void lines.push({ level, message, fields: fields as DeliveryReport }),
    ...options,
  });
  let runs = 0;
  receiver.on('payment.success', () => void (runs += 1));
  const post = async (body: string, signature?: string | null) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signature !== null) headers['x-service-signature'] = signature ?? sign(body, secret);
    const res = await receiver.handle(new Request(url, { method: 'POST', body, headers }));
    return { status: res.status, body: await res.text(), headers: [...res.headers.keys()], line: lines.at(-1)!, runs };
  };
  return { post };
}

/** The bare 401 every refused signature gets: no reason, no hint, nothing but the outcome. */
const BARE_401 = { status: 401, body: '{"outcome":"unauthorized"}', headers: ['content-type'], runs: 0 };

describe('why a signature was refused: in the log and the report, never in the answer', () => {
  const body = JSON.stringify(createEvent('payment.success'));
  const good = sign(body, secret);
  const hex = good.slice('sha256='.length);

  it('a missing header', async () => {
    const r = await setup().post(body, null);
    expect(r).toMatchObject(BARE_401);
    expect(r.line).toMatchObject({ level: 'warn', fields: { outcome: 'unauthorized', reason: 'missing' } });
    expect(r.line.message).toMatch(/no x-service-signature header: .*proxy or framework .* dropped or renamed it/);
  });

  it.each([
    ['upper-case hex', `sha256=${hex.toUpperCase()}`, 'upper-case', /in upper case/],
    ['an upper-case prefix', `SHA256=${hex}`, 'upper-case', /in upper case/],
    ['no prefix', hex, 'no-prefix', /missing its `sha256=` prefix/],
    ['two headers joined', `${good}, ${good}`, 'joined', /two signatures joined by a comma/],
    ['a cut digest', good.slice(0, -2), 'length', /not 64 hex digits long/],
  ])('a malformed header: %s', async (_, header, defect, named) => {
    const r = await setup().post(body, header);
    expect(r).toMatchObject(BARE_401);
    expect(r.line.fields).toMatchObject({ reason: 'malformed', defect });
    expect(r.line.message).toMatch(named);
    expect(r.line.message).toMatch(/the service sends `sha256=` and 64 lower-case hex digits/);
  });

  it('a malformed header: surrounding whitespace, from an adapter that passes the header untrimmed (fetch and Node trim it)', async () => {
    const lines: { fields: DeliveryReport; message: string }[] = [];
    const receiver = createReceiver({
      secret,
      logger: (_level, fields, message) => void lines.push({ fields: fields as DeliveryReport, message }),
    });
    const r = await adapterOf(receiver).process({ method: 'POST', signature: `${good} `, body });
    expect([r.status, r.body, Object.keys(r.headers)]).toEqual([401, '{"outcome":"unauthorized"}', ['content-type']]);
    expect(lines.at(-1)!.fields).toMatchObject({ reason: 'malformed', defect: 'whitespace' });
    expect(lines.at(-1)!.message).toMatch(/padded with whitespace/);
  });

  it('names the defect of a header Node joined or a framework passed as a list', () => {
    expect(headerDefect([good, good])).toBe('joined');
    expect(headerDefect(42)).toBe('not-text');
    expect(headerDefect(`sha256=${'z'.repeat(64)}`)).toBe('not-hex');
  });

  it('a secret with a trailing newline (read from a file): names the whitespace and says to trim it', async () => {
    const r = await setup({ secret: `${secret}\n` }).post(body);
    expect(r).toMatchObject(BARE_401);
    expect(r.line.fields).toMatchObject({ reason: 'mismatch', hints: ['secret-whitespace'] });
    expect(r.line.message).toMatch(/no secret matched: the configured secret has whitespace around it .*trim it/);
  });

  it('a body a parser re-serialised (pretty-printed): names the re-serialisation and says to keep the raw bytes', async () => {
    const event = createEvent('payment.success');
    const signed = signedBody(event, { secret });
    const r = await setup().post(JSON.stringify(event, null, 2), signed.headers['x-service-signature']);
    expect(r).toMatchObject(BARE_401);
    expect(r.line.fields).toMatchObject({ reason: 'mismatch', hints: ['re-serialised'] });
    expect(r.line.message).toMatch(
      /not the bytes the service signed, but a re-serialised JSON of it verifies: .*give payhook the raw bytes/,
    );
  });

  it('the same, when the service sent indented JSON and a parser compacted it', async () => {
    const event = createEvent('payment.success');
    const sent = JSON.stringify(event, null, 2);
    const r = await setup().post(JSON.stringify(event), sign(sent, secret));
    expect(r.line.fields).toMatchObject({ reason: 'mismatch', hints: ['re-serialised'] });
  });

  it("the sandbox secret in live: a delivery for the other environment than the secret's", async () => {
    const sandbox = JSON.stringify(createEvent('payment.success', { mode: 'sandbox' }));
    const r = await setup({ mode: 'live' }).post(sandbox, sign(sandbox, 'whsec_the_sandbox_secret'));
    expect(r).toMatchObject(BARE_401);
    expect(r.line.fields).toMatchObject({ reason: 'mismatch', hints: ['mode'] });
    expect(r.line.message).toMatch(
      /the delivery is for the other environment than this receiver's secret \(mode: 'live'\): use that environment's webhook secret/,
    );
  });

  it('a plain wrong secret: no hint it cannot back, only what to check', async () => {
    const r = await setup({ mode: 'sandbox' }).post(body, sign(body, 'whsec_another_endpoint'));
    expect(r).toMatchObject(BARE_401);
    expect(r.line.fields.hints).toBeUndefined();
    expect(r.line.fields).toMatchObject({ reason: 'mismatch' });
    expect(r.line.message).toMatch(/no secret matched: check that `secret` is this endpoint’s webhook secret \(sandbox and live differ\)/);
  });

  it('a correct delivery carries which secret matched, its claim attempt and its duration', async () => {
    const r = await setup({ secret: ['whsec_old', secret] }).post(body);
    expect(r.status).toBe(200);
    expect(r.line).toMatchObject({ level: 'info', fields: { outcome: 'processed', secretIndex: 1, attempt: 1 } });
    expect(r.line.fields.durationMs).toBeGreaterThanOrEqual(0);
  });
});

describe("the diagnosis under fuzz (the receiver fuzz's bodies, test/security/fuzz/)", () => {
  it(`${fuzzRuns(0.05)} hostile bodies through the signature diagnosis, its budget never spent: it never throws and never says more than mismatch`, async () => {
    // The receiver examines 5 refusals a minute; here every call is in a minute of its own.
    let minute = 0;
    const verify = createVerifier(FUZZ_SECRET);
    const diagnose = createDiagnosis({ secrets: [FUZZ_SECRET], mode: 'live', verify, now: () => (minute += 60_000) });
    await fc.assert(
      fc.asyncProperty(bodyArb, fc.stringMatching(/^[0-9a-f]{64}$/), async ({ body }, hex) => {
        const d = await diagnose({ ok: false, reason: 'mismatch' }, { body, header: `sha256=${hex}` });
        expect(d.reason).toBe('mismatch');
        for (const hint of d.hints ?? []) expect(['re-serialised', 'mode']).toContain(hint);
      }),
      // The fuzz's seed plus 3: the cases it ran when it lived in the receiver fuzz.
      { seed: FUZZ_SEED + 3, numRuns: fuzzRuns(0.05) },
    );
  });
});

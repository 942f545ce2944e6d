import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedBody } from '@payhook/testing';
import {
  createReceiver,
  sign,
  signAsync,
  verifySignature,
  verifySignatureAsync,
  type DeliveryReport,
  type ReceiverOptions,
} from '../src/index.js';
import { toNodeListener } from '../src/node-bridge/node-bridge.js';
import { createDiagnosis, HINTS_PER_MINUTE } from '../src/observing/diagnose.js';
import { REFUSALS_PER_MINUTE } from '../src/base/per-minute.js';

/**
 * What a stranger without the secret can make of a receiver (issue 30): a body no step foresaw,
 * a flood of wrong signatures that each ask for a diagnosis, and a body that is not bytes.
 */
const secret = 'whsec_stranger_test';
const WELL_FORMED = `sha256=${'0f'.repeat(32)}`;
/** The adversarial run's body: 12 KB of nesting, which overflowed JSON.stringify in the diagnosis. */
const NESTED_ARRAYS = `${'['.repeat(6000)}${']'.repeat(6000)}`;
const NESTED_OBJECTS = `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`;

function logged(options: Partial<ReceiverOptions> = {}) {
  const lines: { level: string; fields: DeliveryReport; message: string }[] = [];
  const receiver = createReceiver({
    secret,
    logger: (level, fields, message) => void lines.push({ level, fields: fields as DeliveryReport, message }),
    ...options,
  });
  let runs = 0;
  receiver.onAny(() => void (runs += 1));
  return { receiver, lines, runs: () => runs };
}

describe('a body no step foresaw, under a well-formed signature header', () => {
  const { receiver, lines, runs } = logged();
  let server: http.Server;
  let url = '';
  beforeAll(async () => {
    // The README's plain-Node setup: this server exited on the first nested body before the fix.
    server = http.createServer(toNodeListener(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const post = (body: string | Uint8Array<ArrayBuffer>, signature = WELL_FORMED) =>
    fetch(url, { method: 'POST', body, headers: { 'x-service-signature': signature } }).then(async (r) => [r.status, await r.text()]);

  it.each([
    ['6,000 nested arrays', NESTED_ARRAYS],
    ['3,000 nested objects', NESTED_OBJECTS],
  ])('%s: the bare 401 on toNodeListener and on handle, and the server goes on', async (_, body) => {
    expect(await post(body)).toEqual([401, '{"outcome":"unauthorized"}']);
    const res = await receiver.handle(new Request(url, { method: 'POST', body, headers: { 'x-service-signature': WELL_FORMED } }));
    expect([res.status, await res.text()]).toEqual([401, '{"outcome":"unauthorized"}']);
    expect(lines.at(-1)).toMatchObject({ level: 'warn', fields: { outcome: 'unauthorized', reason: 'mismatch' } });
    const event = JSON.stringify(createEvent('payment.success'));
    expect(await post(event, sign(event, secret))).toEqual([200, '{"outcome":"processed"}']);
  });

  it('the same nesting, signed with the secret: a 400 (not JSON payhook parses), never a 5xx', async () => {
    expect(await post(NESTED_ARRAYS, sign(NESTED_ARRAYS, secret))).toEqual([400, '{"outcome":"malformed"}']);
    expect(await post(NESTED_OBJECTS, sign(NESTED_OBJECTS, secret))).toEqual([400, '{"outcome":"malformed"}']);
  });

  it('huge numbers, long strings, invalid UTF-8 and a BOM: each a bare 401, nothing run', async () => {
    const before = runs();
    const bodies: (string | Uint8Array<ArrayBuffer>)[] = [
      `{"amount":1${'0'.repeat(5000)}}`,
      `{"reference":"${'x'.repeat(200_000)}"}`,
      new Uint8Array([0x7b, 0xff, 0xfe, 0xc0, 0x80, 0x7d]),
      `\ufeff${JSON.stringify(createEvent('payment.success'))}`,
    ];
    for (const body of bodies) expect(await post(body)).toEqual([401, '{"outcome":"unauthorized"}']);
    expect(runs()).toBe(before);
  });
});

describe('the diagnosis of refused signatures', () => {
  const event = createEvent('payment.success');
  const signature = signedBody(event, { secret }).headers['x-service-signature'];
  // Re-serialised: the one hint that parses and hashes the body again.
  const pretty = JSON.stringify(event, null, 2);

  it(`examines the body of at most ${HINTS_PER_MINUTE} refusals a minute; past that a refusal is a plain 401, and the next minute hints again`, async () => {
    const clock = manualClock();
    const { receiver, lines } = logged({ clock });
    const post = async () => {
      const res = await receiver.handle(
        new Request('http://127.0.0.1/', { method: 'POST', body: pretty, headers: { 'x-service-signature': signature } }),
      );
      expect([res.status, await res.text()]).toEqual([401, '{"outcome":"unauthorized"}']);
      return lines.at(-1)!.fields.hints;
    };
    const first = [];
    for (let i = 0; i < HINTS_PER_MINUTE + 3; i++) first.push(await post());
    expect(first).toEqual([...Array(HINTS_PER_MINUTE).fill(['re-serialised']), undefined, undefined, undefined]);
    await clock.advance(60_000);
    expect(await post()).toEqual(['re-serialised']);
  });

  it('never throws: a verifier that fails inside it leaves the plain mismatch', async () => {
    const diagnose = createDiagnosis({
      secrets: [secret],
      mode: undefined,
      now: () => 0,
      verify: () => {
        throw new RangeError('Maximum call stack size exceeded');
      },
    });
    await expect(diagnose({ ok: false, reason: 'mismatch' }, { body: pretty, header: signature })).resolves.toEqual({ reason: 'mismatch' });
  });

  it('keeps the cheap facts past its budget: a padded secret is named on every refusal', async () => {
    const { receiver, lines } = logged({ secret: `${secret}\n` });
    for (let i = 0; i < HINTS_PER_MINUTE + 2; i++) {
      await receiver.handle(
        new Request('http://127.0.0.1/', { method: 'POST', body: pretty, headers: { 'x-service-signature': WELL_FORMED } }),
      );
      expect(lines.at(-1)!.fields.hints).toContain('secret-whitespace');
    }
  });
});

describe('the log of refused deliveries', () => {
  it(`logs at most ${REFUSALS_PER_MINUTE} refusals a minute, says once how many it did not, and still logs every accepted delivery`, async () => {
    const clock = manualClock();
    const { receiver, lines } = logged({ clock });
    const refuse = () =>
      receiver.handle(new Request('http://127.0.0.1/', { method: 'POST', body: '{}', headers: { 'x-service-signature': WELL_FORMED } }));
    for (let i = 0; i < REFUSALS_PER_MINUTE + 40; i++) await refuse();
    const body = JSON.stringify(createEvent('payment.success'));
    await receiver.handle(
      new Request('http://127.0.0.1/', { method: 'POST', body, headers: { 'x-service-signature': sign(body, secret) } }),
    );
    const count = (outcome: string) => lines.filter((l) => l.fields.outcome === outcome).length;
    expect([count('unauthorized'), count('processed')]).toEqual([REFUSALS_PER_MINUTE, 1]);
    await clock.advance(60_000);
    await refuse();
    expect(lines.at(-2)).toMatchObject({
      level: 'warn',
      fields: { skipped: 40 },
      message: expect.stringMatching(/^\[@payhook\/core\] 40 more refused deliveries .* were not logged in the minute from /),
    });
    expect(lines.at(-1)!.fields.outcome).toBe('unauthorized');
  });
});

describe('verifySignature keeps its word: a body that is not bytes is refused with the fix, never thrown', () => {
  const header = sign('{}', secret);
  it.each([
    ['a parsed object', { event: 'payment.success' }],
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
  ])('%s', async (_, body) => {
    const expected = { ok: false, reason: 'not-raw-body', message: expect.stringMatching(/^\[@payhook\/core\] .*raw body.*express\.raw/) };
    expect(verifySignature(body as never, header, secret)).toEqual(expected);
    await expect(verifySignatureAsync(body as never, header, secret)).resolves.toEqual(expected);
    expect(() => sign(body as never, secret)).toThrow(/^\[@payhook\/core\] .*raw body/);
    await expect(signAsync(body as never, secret)).rejects.toThrow(/^\[@payhook\/core\] .*raw body/);
  });

  it('bytes in any view still verify: a Buffer, a Uint8Array, a string', () => {
    const body = '{"a":1}';
    const h = sign(body, secret);
    for (const b of [body, Buffer.from(body), new TextEncoder().encode(body)])
      expect(verifySignature(b, h, secret)).toEqual({ ok: true, secretIndex: 0 });
  });
});

describe('every waiting copy is answered', () => {
  it('in a plain script: 20 concurrent copies of one event get 20 answers, one run, and the process exits 0', () => {
    const script = fileURLToPath(new URL('./fixtures/twenty-copies.ts', import.meta.url));
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(child.stderr).toBe('');
    expect([child.status, child.stdout.trim()]).toEqual([0, `answers 20: 200 processed x1, 200 duplicate x19; runs 1`]);
  });
});

import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sign, signAsync, verifySignature, verifySignatureAsync } from '../../src/index.js';

const golden = JSON.parse(readFileSync(new URL('../fixtures/golden-signatures.json', import.meta.url), 'utf8')) as {
  vectors: { file: string; secret: string; bodyBase64: string; signature: string }[];
};

describe('golden vectors computed by openssl', () => {
  it.each(golden.vectors.map((v) => [v.file, v] as const))('%s: sign and verify agree with openssl', (_, v) => {
    const bytes = new Uint8Array(Buffer.from(v.bodyBase64, 'base64'));
    expect(sign(bytes, v.secret)).toBe(v.signature);
    expect(verifySignature(bytes, v.signature, v.secret)).toEqual({ ok: true, secretIndex: 0 });
  });

  it('hashes a string body as its UTF-8 bytes', () => {
    const v = golden.vectors.find((x) => x.file === 'pretty.json')!;
    const text = Buffer.from(v.bodyBase64, 'base64').toString('utf8');
    expect(sign(text, v.secret)).toBe(v.signature);
    expect(verifySignature(text, v.signature, v.secret).ok).toBe(true);
  });
});

describe('verifySignature', () => {
  const body = Buffer.from(golden.vectors[0]!.bodyBase64, 'base64');
  const secret = golden.vectors[0]!.secret;
  const good = golden.vectors[0]!.signature;

  it('says which secret matched during a rotation', () => {
    expect(verifySignature(body, good, ['new-secret', secret])).toEqual({ ok: true, secretIndex: 1 });
    expect(verifySignature(body, good, [secret, 'old'])).toEqual({ ok: true, secretIndex: 0 });
    expect(verifySignature(body, good, ['a', 'b'])).toEqual({ ok: false, reason: 'mismatch' });
  });

  it.each([
    ['undefined', undefined, 'missing'],
    ['null', null, 'missing'],
    ['empty', '', 'missing'],
    ['an array', [good], 'malformed'],
    ['a comma-joined duplicate', `${good}, ${good}`, 'malformed'],
    ['upper-case hex', good.toUpperCase().replace('SHA256=', 'sha256='), 'malformed'],
    ['an upper-case prefix', good.replace('sha256=', 'SHA256='), 'malformed'],
    ['no prefix', good.slice(7), 'malformed'],
    ['sha1', good.replace('sha256=', 'sha1='), 'malformed'],
    ['short', good.slice(0, -2), 'malformed'],
    ['long', good + '00', 'malformed'],
    ['whitespace', ` ${good}`, 'malformed'],
    ['non-hex', good.slice(0, -1) + 'g', 'malformed'],
    ['a number', 42, 'malformed'],
    ['a list as long as a header', Array.from({ length: 71 }, () => good), 'malformed'],
    ['an object', { toString: () => good }, 'malformed'],
    ['a wrong digest', 'sha256=' + '0'.repeat(64), 'mismatch'],
  ])('rejects %s, sync and async', async (_, header, reason) => {
    expect(verifySignature(body, header, secret)).toEqual({ ok: false, reason });
    expect(await verifySignatureAsync(body, header, secret)).toEqual({ ok: false, reason });
  });

  // A digit that is not lower-case hex must not decode to some byte that could match by chance
  // ('g' read as 16 would equal a carry into the digit before).
  it('calls a header malformed for any one digit that is not lower-case hex, sync and async', async () => {
    const hex = good.slice('sha256='.length);
    for (let at = 0; at < hex.length; at++) {
      for (const digit of ['g', 'G', 'A', '/', ':', '`']) {
        const header = `sha256=${hex.slice(0, at)}${digit}${hex.slice(at + 1)}`;
        expect(verifySignature(body, header, secret), `${digit} at ${at}`).toEqual({ ok: false, reason: 'malformed' });
        expect(await verifySignatureAsync(body, header, secret), `${digit} at ${at}`).toEqual({ ok: false, reason: 'malformed' });
      }
    }
  });

  // An empty or non-string secret is a configuration mistake, never a key: a sender who signs with
  // the empty key, or with "123" when the secret is the number 123, must not get in.
  it.each([
    ['no secrets', []],
    ['an empty secret', ['']],
    ['a number', [123]],
    ['undefined', undefined],
    ['a number instead of a list', 123],
  ])('finds no usable secret in %s, sync and async', async (_, secrets) => {
    for (const signedWith of ['', '123', secret]) {
      const header = sign(body, signedWith);
      const given = secrets as string[];
      expect(verifySignature(body, header, given)).toEqual({ ok: false, reason: 'no-secret' });
      expect(await verifySignatureAsync(body, header, given)).toEqual({ ok: false, reason: 'no-secret' });
    }
  });

  it('names the first secret that matches, among many or repeated ones, sync and async', async () => {
    const nine = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', secret];
    for (const [secrets, secretIndex] of [
      [nine, 8],
      [[secret, secret], 0],
      [['', secret], 1],
    ] as const) {
      expect(verifySignature(body, good, secrets)).toEqual({ ok: true, secretIndex });
      expect(await verifySignatureAsync(body, good, secrets)).toEqual({ ok: true, secretIndex });
    }
  });

  it('says a parsed body is not the raw body and how to get it, and sign refuses one', async () => {
    const parsed = JSON.parse(body.toString('utf8')) as unknown as string;
    const verdict = { ok: false, reason: 'not-raw-body', message: expect.stringMatching(/^\[@payhook\/core\] .*express\.raw/) };
    expect(verifySignature(parsed, good, secret)).toEqual(verdict);
    expect(await verifySignatureAsync(parsed, good, secret)).toEqual(verdict);
    expect(() => sign(parsed, secret)).toThrow(/^\[@payhook\/core\] the signature is computed \(sign\) over/);
    await expect(signAsync(parsed, secret)).rejects.toThrow(/^\[@payhook\/core\] the signature is computed \(signAsync\) over/);
  });

  it('rejects every body with one byte flipped', () => {
    fc.assert(
      fc.property(fc.nat({ max: body.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, mask) => {
        const copy = Buffer.from(body);
        copy[at]! ^= mask;
        expect(verifySignature(copy, good, secret)).toEqual({ ok: false, reason: 'mismatch' });
      }),
      { numRuns: 500 },
    );
  });

  // A flipped body byte changes every digit of the MAC; these headers are right but for one digit,
  // so a comparison that stopped early (the first bytes only) would let them through.
  it('rejects the right signature with any one hex digit changed, the last included, sync and async', async () => {
    const hex = good.slice('sha256='.length);
    for (let at = 0; at < hex.length; at++) {
      const digit = hex[at] === '0' ? '1' : '0';
      const header = `sha256=${hex.slice(0, at)}${digit}${hex.slice(at + 1)}`;
      expect(verifySignature(body, header, secret), `digit ${at}`).toEqual({ ok: false, reason: 'mismatch' });
      expect(await verifySignatureAsync(body, header, secret), `digit ${at}`).toEqual({ ok: false, reason: 'mismatch' });
    }
    expect(verifySignature(body, good, secret)).toEqual({ ok: true, secretIndex: 0 });
  });

  it('rejects a re-serialised body', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ minLength: 1 }), (value, key) => {
        const pretty = JSON.stringify(value, null, 2);
        const reserialised = JSON.stringify(JSON.parse(pretty));
        fc.pre(reserialised !== pretty);
        expect(verifySignature(reserialised, sign(pretty, key), key).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
    const v = golden.vectors.find((x) => x.file === 'pretty.json')!;
    const original = Buffer.from(v.bodyBase64, 'base64').toString('utf8');
    expect(verifySignature(JSON.stringify(JSON.parse(original)), v.signature, v.secret).ok).toBe(false);
  });

  it('never throws and never accepts a random header', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => 'sha256=' + s),
          fc.stringMatching(/^sha256=[0-9a-f]{64}$/),
          fc.array(fc.string()),
          fc.anything(),
        ),
        (header) => {
          expect(verifySignature(body, header, secret).ok).toBe(false);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

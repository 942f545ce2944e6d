import { sign } from '@payhook/core';
import { type BodyKind, bodyArb } from '@payhook/test-support/hostile-bodies';
import fc from 'fast-check';

/**
 * The receiver fuzz's hostile requests (test/security/fuzz/): a method, header lines and a body
 * from @payhook/test-support/hostile-bodies, under every kind of signature header.
 */

/** The secret every receiver under fuzz is given. */
export const SECRET = 'whsec_fuzz_secret_value';

export interface Case extends BodyKind {
  method: string;
  /** Header lines as sent; names may be upper-case, a name may repeat. */
  headers: [string, string][];
  /** Exactly one signature header, whose value is the HMAC of exactly these bytes. */
  validSignature: boolean;
  /** Split points for a chunked upload over a socket. */
  chunks: number[];
  /** Over a socket: send a Content-Length that is shorter or longer than the body. */
  lie: 'none' | 'short' | 'long';
}

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });

type SignatureKind =
  | 'valid'
  | 'upper-name'
  | 'missing'
  | 'upper-hex'
  | 'upper-prefix'
  | 'short'
  | 'long'
  | 'duplicate'
  | 'duplicate-mixed'
  | 'other-secret'
  | 'random'
  | 'empty'
  | 'sha1'
  | 'other-body'
  | 'well-formed';

const signatureArb = fc.constantFrom<SignatureKind>(
  'valid',
  'valid',
  'valid',
  'valid',
  'valid',
  'upper-name',
  'upper-name',
  'well-formed',
  'well-formed',
  'well-formed',
  'missing',
  'upper-hex',
  'upper-prefix',
  'short',
  'long',
  'duplicate',
  'duplicate-mixed',
  'other-secret',
  'random',
  'empty',
  'sha1',
  'other-body',
);

export const caseArb: fc.Arbitrary<Case> = fc
  .record({
    method: fc.constantFrom('POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'GET', 'PUT', 'PATCH', 'DELETE', 'post'),
    body: bodyArb,
    signature: signatureArb,
    random: printable,
    hex: fc.stringMatching(/^[0-9a-f]{64}$/),
    contentType: fc.constantFrom(
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      'application/json; charset=latin1',
    ),
    extra: fc.array(fc.tuple(fc.constantFrom('x-forwarded-for', 'x-custom', 'accept', 'x-service-signature-2', 'X-Payhook'), printable), {
      maxLength: 3,
    }),
    chunks: fc.array(fc.nat(), { maxLength: 6 }),
    lie: fc.constantFrom<Case['lie']>('none', 'none', 'none', 'none', 'none', 'none', 'short', 'long'),
  })
  .map(({ method, body, signature, random, hex, contentType, extra, chunks, lie }) => {
    const good = sign(body.body, SECRET);
    const name = 'x-service-signature';
    const headers: [string, string][] = [];
    if (contentType) headers.push(['content-type', contentType]);
    const sig: Record<SignatureKind, [string, string][]> = {
      valid: [[name, good]],
      'upper-name': [['X-SERVICE-SIGNATURE', good]],
      missing: [],
      'upper-hex': [[name, `sha256=${good.slice(7).toUpperCase()}`]],
      'upper-prefix': [[name, `SHA256=${good.slice(7)}`]],
      short: [[name, good.slice(0, 20)]],
      long: [[name, `${good}00`]],
      duplicate: [
        [name, good],
        [name, good],
      ],
      'duplicate-mixed': [
        [name, good],
        ['X-Service-Signature', sign(body.body, 'whsec_other')],
      ],
      'other-secret': [[name, sign(body.body, 'whsec_other')]],
      random: [[name, random.trim() || 'x']],
      empty: [[name, '']],
      sha1: [[name, `sha1=${good.slice(7, 47)}`]],
      'other-body': [[name, sign(Buffer.concat([body.body, Buffer.from(' ')]), SECRET)]],
      // The service's exact form, any digest: what a stranger without the secret sends.
      'well-formed': [[name, `sha256=${hex}`]],
    };
    headers.push(...sig[signature], ...extra.map(([n, v]) => [n, v.trim() || 'x'] as [string, string]));
    return {
      // Failure reports print this summary, not every byte of a huge body.
      [fc.toStringMethod]: () =>
        `${method} ${JSON.stringify(headers)} body(${body.body.length} B, base64 head) ${body.body.subarray(0, 512).toString('base64')} chunks ${JSON.stringify(chunks)} lie ${lie}`,
      method,
      headers,
      body: body.body,
      pollutes: body.pollutes,
      badUtf8: body.badUtf8,
      validSignature: signature === 'valid' || signature === 'upper-name',
      chunks: [...new Set(chunks.map((c) => c % (body.body.length + 1)))].sort((a, b) => a - b),
      lie,
    };
  });

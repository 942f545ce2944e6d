import { sign } from '@payhook/core';
import { signatureHeaderName } from '@payhook/core/api';

/** An event object (serialised with `JSON.stringify`, as the service does), or the exact bytes to send. */
export type EventOrBytes = object | string | Uint8Array;

/** How a body is signed: the secret, and the header to sign in. */
export interface SignOptions {
  /** The webhook secret the receiver checks against. */
  secret: string;
  /** The header to sign in, as the receiver's `signatureHeader` option. Default `X-Service-Signature`; ePay's real deliveries use `X-Epay-Signature`. */
  signatureHeader?: string;
}

/**
 * A signed body. `body` is a `string` for an event object or a string (pass it to `fetch`,
 * `JSON.parse` or supertest as is), and the very bytes given (typed as given) for a `Uint8Array`.
 */
export interface SignedBody<Body extends string | Uint8Array = string | Uint8Array> {
  /** The exact bytes that were signed: send them unchanged. */
  body: Body;
  /** `content-type` and the signature header (`x-service-signature` unless `signatureHeader` says otherwise), as the service sends them. */
  headers: { 'content-type': string; 'x-service-signature': string } & Record<string, string>;
  /** The signature header's value, `sha256=<hex>`. */
  signature: string;
}

/** The body type of `signedBody(x)`: the bytes' own type for bytes (they are sent as given), `string` for an event or a string. */
export type BodyOf<T extends EventOrBytes> = T extends Uint8Array ? T : string;

/** Turn an event or bytes into the body the service would send. */
export function toBody<T extends EventOrBytes>(eventOrBytes: T): BodyOf<T>;
export function toBody(eventOrBytes: EventOrBytes): string | Uint8Array {
  if (typeof eventOrBytes === 'string' || eventOrBytes instanceof Uint8Array) return eventOrBytes;
  if (eventOrBytes === null || typeof eventOrBytes !== 'object') {
    throw new TypeError('[@payhook/testing] pass an event object (see createEvent), a string or bytes as the body to sign.');
  }
  return JSON.stringify(eventOrBytes);
}

function checkSecret(options: SignOptions | undefined, fn: string): string {
  if (!options || typeof options.secret !== 'string' || options.secret === '') {
    throw new TypeError(`[@payhook/testing] ${fn} needs { secret }: the webhook secret your receiver was created with.`);
  }
  return options.secret;
}

/**
 * The raw body and headers of a signed delivery, for tools that send their own request
 * (supertest, light-my-request, `fetch`). The signature is core's `sign` over exactly `body`.
 *
 * @example
 * const delivery = signedBody(createEvent('payment.success'), { secret });
 * await request(app).post('/webhooks').set(delivery.headers).send(delivery.body).expect(200);
 */
export function signedBody<T extends EventOrBytes>(eventOrBytes: T, options: SignOptions): SignedBody<BodyOf<T>> {
  const secret = checkSecret(options, 'signedBody');
  const body = toBody(eventOrBytes);
  const signature = sign(body, secret);
  const header = signatureHeaderName(options.signatureHeader);
  return { body, headers: { 'content-type': 'application/json', [header]: signature } as SignedBody['headers'], signature };
}

/** What `signedRequest` takes: how to sign, and where the request goes. */
export interface SignedRequestOptions extends SignOptions {
  /** Where the request goes. Default `http://127.0.0.1/webhooks` (only the path matters to an in-process handler). */
  url?: string | URL;
  /** Extra headers, or replacements (e.g. a wrong signature for a negative test). */
  headers?: Record<string, string>;
}

/**
 * A signed web `Request` (POST) for a fetch handler: `receiver.handle`, Hono's `app.fetch`, a Next
 * route handler. A `Request` body can be read once: make a new one for each send.
 *
 * @example
 * const response = await app.fetch(signedRequest(createEvent('payment.success'), { secret }));
 * expect(response.status).toBe(200);
 */
export function signedRequest(eventOrBytes: EventOrBytes, options: SignedRequestOptions): Request {
  const { body, headers } = signedBody(eventOrBytes, {
    secret: checkSecret(options, 'signedRequest'),
    signatureHeader: options.signatureHeader,
  });
  return new Request(options.url ?? 'http://127.0.0.1/webhooks', {
    method: 'POST',
    headers: { ...headers, ...options.headers },
    body: body as BodyInit,
  });
}

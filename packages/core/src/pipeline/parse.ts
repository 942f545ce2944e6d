import secureJson from 'secure-json-parse';
import { isPaymentEventShape, paymentEventSchema, type PaymentEvent } from '../event-schema.js';
import type { RawBody } from '../signature.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
// Anything that could spell a `__proto__` or `constructor` key, escapes included: only these take the slow parse.
const SUSPECT = /proto|constructor|\\u|^\uFEFF/;

/**
 * Bytes to a payment event, after the signature held: strict UTF-8, JSON without prototype keys,
 * and the shape of section 2.1 (unknown extra fields pass). The common payload takes the fast
 * path (`JSON.parse` and a hand check); anything else gets secure-json-parse and zod's message.
 */
export function parseEvent(body: RawBody): { event: PaymentEvent } | { error: unknown } {
  let value: unknown;
  try {
    const text = typeof body === 'string' ? body : utf8.decode(body);
    value = SUSPECT.test(text)
      ? secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
      : JSON.parse(text);
  } catch (error) {
    return { error };
  }
  if (isPaymentEventShape(value)) return { event: value as PaymentEvent };
  const parsed = paymentEventSchema.safeParse(value);
  // The hand check and zod agree on every payload the tests generate; zod decides if they ever do not.
  return parsed.success ? { event: parsed.data as PaymentEvent } : { error: parsed.error };
}

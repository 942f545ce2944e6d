import secureJson from 'secure-json-parse';
import { isPaymentEventShape, paymentEventSchema, type PaymentEvent } from '../event-schema.js';
import type { RawBody } from '../signature.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Bytes to a payment event, after the signature held: strict UTF-8, JSON without prototype keys,
 * and the shape of section 2.1 (unknown extra fields pass). The common payload takes the fast
 * path (`JSON.parse`, a walk over its keys, a hand check of its shape); anything that could be a
 * prototype key gets secure-json-parse's verdict, anything misshapen zod's message.
 */
export function parseEvent(body: RawBody): PaymentEvent | Malformed {
  let value: unknown;
  try {
    const text = typeof body === 'string' ? body : utf8.decode(body);
    value = text.charCodeAt(0) === 0xfeff ? undefined : JSON.parse(text);
    if (value === undefined || (typeof value === 'object' && value !== null && mayHavePrototypeKey(value, 0))) {
      value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    }
  } catch (error) {
    return new Malformed(error);
  }
  if (isPaymentEventShape(value)) return value as PaymentEvent;
  const parsed = paymentEventSchema.safeParse(value);
  // The hand check and zod agree on every payload the tests generate; zod decides if they ever do not.
  return parsed.success ? (parsed.data as PaymentEvent) : new Malformed(parsed.error);
}

/** Why a body is not an event: the parser's or zod's error, for the logs. */
export class Malformed {
  constructor(readonly error: unknown) {}
}

/**
 * Whether any object in the tree has a `__proto__` or `constructor` key (JSON.parse makes them
 * plain own keys, escapes decoded). A walk over the parsed keys is a quarter of the cost of a
 * scan of the text; a tree deeper than a payload ever is goes to the slow path too.
 */
function mayHavePrototypeKey(node: object, depth: number): boolean {
  if (depth > 32) return true;
  for (const key in node) {
    if (key === '__proto__' || key === 'constructor') return true;
    const child = (node as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && mayHavePrototypeKey(child, depth + 1)) return true;
  }
  return false;
}

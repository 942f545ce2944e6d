import secureJson from 'secure-json-parse';
import { isPaymentEventShape, paymentEventSchema, type PaymentEvent } from '../protocol/event-schema.js';
import type { RawBody } from '../protocol/signature.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport } from '../contracts/delivery.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Bytes to a payment event, after the signature held: strict UTF-8, JSON without prototype keys
 * and nested at most MAX_JSON_DEPTH levels, and the shape of section 2.1 (unknown extra fields
 * pass). The common payload takes the fast path (`JSON.parse`, one walk over its keys, a hand
 * check of its shape); anything that could be a prototype key gets secure-json-parse's verdict,
 * anything misshapen zod's message.
 */
export function parseEvent(body: RawBody): PaymentEvent | Malformed {
  let value: unknown;
  try {
    const text = typeof body === 'string' ? body : utf8.decode(body);
    value = text.charCodeAt(0) === 0xfeff ? undefined : JSON.parse(text);
    const found = value === undefined ? PROTOTYPE_KEY : typeof value === 'object' && value !== null ? scan(value, 1) : undefined;
    if (found === TOO_DEEP) return new Malformed(new Error(TOO_DEEP_MESSAGE));
    if (found === PROTOTYPE_KEY) {
      value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
      // A byte-order mark hid the text from JSON.parse above: the depth is checked on what it parsed to.
      if (typeof value === 'object' && value !== null && scan(value, 1) === TOO_DEEP) return new Malformed(new Error(TOO_DEEP_MESSAGE));
    }
  } catch (error) {
    return new Malformed(error);
  }
  if (isPaymentEventShape(value)) return value as PaymentEvent;
  const parsed = paymentEventSchema.safeParse(value);
  // The hand check and zod agree on every payload the tests generate; zod decides if they ever do not.
  return parsed.success ? (parsed.data as PaymentEvent) : new Malformed(parsed.error, value);
}

/**
 * Why a body is not an event: the parser's error, or zod's with the JSON value that failed it
 * (`parsed`), for the logs.
 */
export class Malformed {
  constructor(
    readonly error: unknown,
    readonly parsed?: unknown,
  ) {}

  /** The report: `invalid` with the reference and event the value names, when it was JSON; else `malformed`. */
  report(): DeliveryReport {
    if (this.parsed === undefined) return reportOf('malformed', { error: this.error });
    const { reference, event } = (typeof this.parsed === 'object' && this.parsed !== null ? this.parsed : {}) as Record<string, unknown>;
    const text = (v: unknown) => (typeof v === 'string' && v.length <= 200 ? v : undefined);
    return reportOf('invalid', { error: this.error, reference: text(reference), event: text(event) });
  }
}

/**
 * How deep objects and arrays may nest, the event itself being level 1. The service's events nest
 * two levels; a deeper tree only costs handlers (a recursive `JSON.stringify` of 100,000 levels
 * throws) and is answered as a malformed payload.
 */
export const MAX_JSON_DEPTH = 64;
const TOO_DEEP_MESSAGE = `[@payhook/core] the payload nests objects or arrays deeper than ${MAX_JSON_DEPTH} levels; no event of the service does, so it was not handled.`;
const TOO_DEEP = 1;
const PROTOTYPE_KEY = 2;

/**
 * Whether the tree nests past MAX_JSON_DEPTH, or any object in it has a `__proto__` or
 * `constructor` key (JSON.parse makes them plain own keys, escapes decoded), which
 * secure-json-parse then judges. A walk over the parsed keys is a quarter of the cost of a scan
 * of the text.
 */
function scan(node: object, depth: number): typeof TOO_DEEP | typeof PROTOTYPE_KEY | undefined {
  if (depth > MAX_JSON_DEPTH) return TOO_DEEP;
  let found: typeof PROTOTYPE_KEY | undefined;
  for (const key in node) {
    if (key === '__proto__' || key === 'constructor') found = PROTOTYPE_KEY;
    const child = (node as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null) {
      const below = scan(child, depth + 1);
      if (below === TOO_DEEP) return TOO_DEEP;
      found ??= below;
    }
  }
  return found;
}

import { checkPaymentEvent, EventShapeError } from '../protocol/event-check.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import type { RawBody } from '../protocol/signature.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport } from '../contracts/delivery.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Bytes to a payment event, after the signature held: strict UTF-8, JSON without prototype keys
 * and nested at most MAX_JSON_DEPTH levels, and the shape of section 2.1 (unknown extra fields
 * pass). The common payload takes `JSON.parse`, one walk over its keys and the hand check of its
 * shape (../protocol/event-check.ts), with no schema library loaded; a text that could hold a
 * prototype key (or starts with a byte-order mark) gets secure-json-parse's verdict, loaded the
 * first time one arrives, so only then is the answer a promise.
 */
export function parseEvent(body: RawBody): PaymentEvent | Malformed | Promise<PaymentEvent | Malformed> {
  let value: unknown;
  let text: string;
  try {
    text = typeof body === 'string' ? body : utf8.decode(body);
    value = text.charCodeAt(0) === 0xfeff ? undefined : JSON.parse(text);
  } catch (error) {
    return new Malformed(error);
  }
  const found = value === undefined ? PROTOTYPE_KEY : typeof value === 'object' && value !== null ? scan(value, 1) : undefined;
  if (found === TOO_DEEP) return new Malformed(new Error(TOO_DEEP_MESSAGE));
  if (found === PROTOTYPE_KEY)
    return loadSecureJson().then(
      (secureJson) => parseSecurely(secureJson, text),
      (error) => new Malformed(error),
    );
  return shaped(value);
}

type SecureJson = typeof import('secure-json-parse');
let secureJsonModule: Promise<SecureJson> | undefined;
const loadSecureJson = () =>
  (secureJsonModule ??= import('secure-json-parse').then((m) => ((m as { default?: SecureJson }).default ?? m) as SecureJson));

function parseSecurely(secureJson: SecureJson, text: string): PaymentEvent | Malformed {
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    return new Malformed(error);
  }
  // A byte-order mark hid the text from JSON.parse above: the depth is checked on what it parsed to.
  if (typeof value === 'object' && value !== null && scan(value, 1) === TOO_DEEP) return new Malformed(new Error(TOO_DEEP_MESSAGE));
  return shaped(value);
}

function shaped(value: unknown): PaymentEvent | Malformed {
  const checked = checkPaymentEvent(value);
  return checked.ok ? checked.event : new Malformed(new EventShapeError(checked.issues), value);
}

/**
 * Why a body is not an event: the parser's error, or the shape's (EventShapeError) with the JSON
 * value that failed it (`parsed`), for the logs.
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

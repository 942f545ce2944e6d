import { absent, arr, bool, enumOf, lit, nul, nullable, obj, oneOf, str, type Shape } from './shapes.js';

/*
 * The service's contract as shapes, written from the interface (payment-service-interface.md) and,
 * where it says "not shown", from the official SDKs (epay-et/go-sdk types.go, client_test.go;
 * epay-et/php-sdk tests/ClientTest.php). Nothing here is read from the reference service's code,
 * so the same check means the same thing against ePay's sandbox.
 */

/** go-sdk types.go `AllStatuses`. */
export const STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled', 'reversed', 'refunding', 'refunded'] as const;
/** Interface section 6; go-sdk types.go `AllEventTypes`. */
export const EVENTS = [
  'payment.success',
  'payment.failed',
  'payment.cancelled',
  'payment.refunding',
  'payment.refunded',
  'payment.reversed',
] as const;

/** ISO 8601 UTC with milliseconds (interface 2.1: paidAt, createdAt). */
export const ISO_MS = str(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO 8601 UTC with ms');
/** An ISO 8601 timestamp (go-sdk types.go says only "ISO 8601" for expiresAt and occurredAt). */
export const ISO = str(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/, 'ISO 8601');
/** Interface 2.1: a decimal with two fraction digits. */
export const MONEY = str(/^\d+\.\d{2}$/, 'decimal, 2 places');
/** Interface 2.1: ISO 4217, three letters. */
export const CURRENCY = str(/^[A-Z]{3}$/, 'ISO 4217');
/** go-sdk types.go `InitializedPayment.Reference`: "formatted P{8-hex}{yyyymmdd}". */
export const REFERENCE = str(/^P[0-9A-F]{8}\d{8}$/, 'P + 8 hex + yyyymmdd');
export const STATUS = enumOf(STATUSES);
const URL_STRING = str(/^https?:\/\/\S+$/, 'URL');
const nstr = nullable(str());

/** Interface 2.4: `{ status: "error", data: { message } }` for every failure. */
export const ERROR_ENVELOPE = obj({ status: lit('error'), data: obj({ message: str() }) });

/** Interface 2.3 and go-sdk types.go `InitializedPayment`. */
export const INITIALIZED = obj({ reference: REFERENCE, checkoutUrl: URL_STRING, status: lit('success'), expiresAt: ISO });

/** go-sdk types.go `Transaction` (retrieve and list). */
export const TRANSACTION = obj({
  reference: REFERENCE,
  merchantReference: nstr,
  status: STATUS,
  amount: MONEY,
  currencyCode: CURRENCY,
  paidAt: nullable(ISO_MS),
  createdAt: ISO_MS,
});

/** go-sdk types.go `Customer`: every field *string. */
export const CUSTOMER = obj({ name: nstr, email: nstr, phone: nstr });

/** go-sdk types.go `VerifiedPayment`: paidAt is a plain string, a verified payment was paid. */
export const VERIFIED = obj({
  reference: REFERENCE,
  merchantReference: nstr,
  status: lit('completed'),
  amount: MONEY,
  serviceFee: nullable(MONEY),
  currencyCode: nullable(CURRENCY),
  paymentMethod: nstr,
  customer: CUSTOMER,
  paidAt: ISO_MS,
  createdAt: ISO_MS,
});

/** go-sdk types.go `transactionListResponse`. */
export const LIST_PAGE = obj({ data: arr(TRANSACTION), nextCursor: nstr, hasMore: bool });

/** go-sdk types.go `TimelineEvent` and `Timeline`. */
export const TIMELINE = obj({
  reference: REFERENCE,
  events: arr(obj({ eventType: str(), occurredAt: ISO, errorCode: nstr, errorMessage: nstr })),
});

/** go-sdk types.go `ProviderItem` and `Provider`, in the `{ data: [...] }` envelope (providers.go). */
const PROVIDER_ITEM = { providerCode: str(), providerName: nstr, flowCode: str() };
export const PROVIDER_ITEMS = obj({ data: arr(obj(PROVIDER_ITEM)) });
export const PROVIDERS = obj({ data: arr(obj({ ...PROVIDER_ITEM, providerCategory: nstr, isEnabled: bool })) });

/**
 * Interface 2.1 (every event, the same payload) with go-sdk types.go `WebhookEvent`'s nullability:
 * `currency`, not `currencyCode`; paidAt a timestamp on payment.success, and nil for every other
 * event in the Go SDK (null, absent or a timestamp are all read as such).
 */
export function webhookEvent(event: (typeof EVENTS)[number], reference: string, status: string): Shape {
  return obj({
    event: lit(event),
    mode: lit('sandbox'),
    reference: lit(reference),
    merchantReference: nstr,
    amount: nullable(MONEY),
    serviceFee: nullable(MONEY),
    currency: nullable(CURRENCY),
    status: lit(status),
    paymentMethod: nstr,
    customer: CUSTOMER,
    paidAt: event === 'payment.success' ? ISO_MS : oneOf(ISO_MS, nul, absent),
    createdAt: ISO_MS,
  });
}

/** Interface 5.5: `sha256=<lower-case hex HMAC-SHA256>`. */
export const SIGNATURE = /^sha256=[0-9a-f]{64}$/;
/** The interface's header, and the one ePay sends (go-sdk webhooks.go `SignatureHeader`). */
export const SIGNATURE_HEADERS = ['X-Service-Signature', 'X-Epay-Signature'] as const;

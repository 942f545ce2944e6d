import * as z from 'zod';
import { TRANSACTION_STATUSES } from './payment-lifecycle.js';
import { API_MESSAGES, MAX_LIST_RANGE_MS, normalizeEthiopianPhone, PAGE_SIZE, parseAmount, SUPPORTED_CURRENCIES } from './api-rules.js';

export * from './api-rules.js';

/**
 * The request and response shapes of the service's API (section 4), shared by the reference
 * implementation and the typed client, with the exact messages the service answers 400 with.
 * Where the interface says "not shown", these are the reference's documented choices
 * (docs/service-gaps.md).
 */

const message = (text: string) => ({ error: text });

const absoluteHttpUrl = (text: string) =>
  z.string(message(text)).refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, message(text));

/**
 * The initialize request body (2.2), with the optional fields the official SDKs send (go-sdk
 * payments.go `initializeBody`): `email`, `firstName`, `lastName`, `returnUrl`. `customerPhone`
 * comes out canonical (`2519…`). The service itself refuses `http:` callback and return URLs
 * unless it runs with its development flag. Unknown fields are ignored.
 */
export const initializeInputSchema = z.object({
  amount: z.string(message(API_MESSAGES.amount)).superRefine((value, ctx) => {
    const parsed = parseAmount(value);
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
  }),
  currencyCode: z.enum(SUPPORTED_CURRENCIES, message(API_MESSAGES.currencyCode)),
  customerPhone: z
    .string(message(API_MESSAGES.customerPhone))
    .refine((value) => normalizeEthiopianPhone(value) !== null, message(API_MESSAGES.customerPhone))
    .transform((value) => normalizeEthiopianPhone(value)!),
  merchantReference: z
    .string(message(API_MESSAGES.merchantReference))
    .min(1, message(API_MESSAGES.merchantReference))
    .max(100, message(API_MESSAGES.merchantReference)),
  callbackUrl: absoluteHttpUrl(API_MESSAGES.callbackUrl).optional(),
  returnUrl: absoluteHttpUrl(API_MESSAGES.returnUrl).optional(),
  email: z.email(message(API_MESSAGES.email)).optional(),
  firstName: z.string(message(API_MESSAGES.firstName)).max(100, message(API_MESSAGES.firstName)).optional(),
  lastName: z.string(message(API_MESSAGES.lastName)).max(100, message(API_MESSAGES.lastName)).optional(),
});
/** What a merchant sends to initialize. */
export type InitializeInput = z.input<typeof initializeInputSchema>;
/** The initialize body after validation (canonical phone). */
export type InitializeData = z.output<typeof initializeInputSchema>;

/** A field the official SDKs model as nullable: null when the service sends null or leaves it out. */
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable().default(null);

/**
 * The initialize result (2.3), bare, as the SDKs read it: `status` is always `success`, and
 * `expiresAt` is when the checkout session ends (go-sdk types.go `InitializedPayment`).
 */
export const initializeResultSchema = z.looseObject({
  reference: z.string().min(1),
  checkoutUrl: z.string().min(1),
  status: z.string().optional(),
  expiresAt: z.string().optional(),
});
/** The initialize result, as `initializeResultSchema` reads it. */
export type InitializeResult = z.infer<typeof initializeResultSchema>;

/** The customer on a record: every field may be null (go-sdk types.go `Customer`). */
export const customerSchema = z.looseObject({
  name: nullable(z.string()),
  email: nullable(z.string()),
  phone: nullable(z.string()),
});

/**
 * A transaction as verify, retrieve and list return it, bare, in the SDKs' shape (go-sdk types.go
 * `Transaction`, `VerifiedPayment`): `currencyCode`, not the webhook's `currency`. The service
 * always sends `reference`, `status`, `amount` and `createdAt`; the rest may be null or absent
 * (retrieve and list carry less than verify, and the Go SDK's recorded verify receipt has no
 * `currencyCode`). The reference service also sends
 * `mode`, `checkoutUrl`, `updatedAt` and `expiresAt`; other extra fields pass through.
 */
export const transactionRecordSchema = z.looseObject({
  reference: z.string().min(1),
  merchantReference: nullable(z.string()),
  status: z.enum(TRANSACTION_STATUSES),
  amount: z.string(),
  serviceFee: nullable(z.string()),
  currencyCode: nullable(z.string()),
  paymentMethod: nullable(z.string()),
  customer: nullable(customerSchema),
  paidAt: nullable(z.string()),
  createdAt: z.string(),
  mode: z.enum(['live', 'sandbox']).optional(),
  checkoutUrl: z.string().optional(),
  updatedAt: z.string().optional(),
  expiresAt: z.string().optional(),
});
/** A transaction as verify, retrieve and list return it (`transactionRecordSchema`). */
export type TransactionRecord = z.infer<typeof transactionRecordSchema>;

/**
 * One step in a transaction's life, as the SDKs read it (go-sdk types.go `TimelineEvent`):
 * `eventType` is what happened (`session_created`, `payment_failed`, …), `errorCode` and
 * `errorMessage` are set on failures only. The reference also sends `status`, the status after
 * the step.
 */
export const timelineEventSchema = z.looseObject({
  eventType: z.string(),
  occurredAt: z.string(),
  errorCode: nullable(z.string()),
  errorMessage: nullable(z.string()),
  status: z.enum(TRANSACTION_STATUSES).optional(),
});
/** One step in a transaction's life (`timelineEventSchema`). */
export type TimelineEvent = z.infer<typeof timelineEventSchema>;

/** The timeline endpoint's body: events oldest first. */
export const timelineSchema = z.looseObject({
  reference: z.string(),
  events: z.array(timelineEventSchema),
});
/** The timeline endpoint's body (`timelineSchema`). */
export type Timeline = z.infer<typeof timelineSchema>;

/** A list page, newest first, PAGE_SIZE at most (go-sdk types.go `transactionListResponse`). */
export const listPageSchema = z.looseObject({
  data: z.array(transactionRecordSchema),
  nextCursor: z.string().nullable(),
  hasMore: z.boolean(),
});
/** A list page (`listPageSchema`). */
export type ListPage = z.infer<typeof listPageSchema>;

/** An entry of `GET /v1/payment-providers/list`, for a merchant's dropdown (go-sdk types.go `ProviderItem`). */
export const providerItemSchema = z.looseObject({
  providerCode: z.string().min(1),
  providerName: nullable(z.string()),
  flowCode: nullable(z.string()),
});
/** An entry of the compact provider list (`providerItemSchema`). */
export type ProviderItem = z.infer<typeof providerItemSchema>;

/**
 * An entry of `GET /v1/payment-providers`: every provider, disabled ones too, with its category
 * and whether the account may route to it (go-sdk types.go `Provider`).
 */
export const providerSchema = providerItemSchema.extend({
  providerCategory: nullable(z.string()),
  isEnabled: z.boolean().default(false),
});
/** An entry of the full provider list (`providerSchema`). */
export type Provider = z.infer<typeof providerSchema>;

/** Both provider endpoints answer `{ data: [...] }`. */
export const providerListSchema = <T extends z.ZodType>(item: T) => z.looseObject({ data: z.array(item) });

/** The permissions the provider endpoints need, named as the SDKs name them (go-sdk README). */
export const PROVIDER_PERMISSIONS = {
  list: 'list_platform_payment_provider',
  getAll: 'get_platform_payment_provider',
} as const;

/** The query parameters the list accepts, each at most once. */
export const LIST_QUERY_PARAMS = ['from', 'to', 'currency', 'status', 'cursor'] as const;

/** The 400 messages for a list parameter the service does not take, or one given twice. */
export const LIST_PARAM_MESSAGES = {
  unknown: (name: string) =>
    `${name} is not a list parameter: remove it; the list accepts ${LIST_QUERY_PARAMS.join(', ')} (the page size is fixed at ${PAGE_SIZE})`,
  repeated: (name: string) => `${name} is given more than once: send each of ${LIST_QUERY_PARAMS.join(', ')} at most once`,
} as const;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 24 * 60 * 60 * 1000;

const dateTime = (text: string) =>
  z
    .string(message(text))
    .refine(
      (value) => /^\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:\d{2}))?$/.test(value) && !Number.isNaN(Date.parse(value)),
      message(text),
    );

const isIsoCurrency = (code: string): boolean => {
  if (!/^[A-Z]{3}$/.test(code)) return false;
  const known = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('currency');
  return known ? known.includes(code) : true;
};

/** The last millisecond `to` covers: a date-only `to` (`2026-08-31`) covers that whole day, to 23:59:59.999Z. */
const endOf = (to: string): number => Date.parse(to) + (DATE_ONLY.test(to) ? DAY_MS - 1 : 0);

/**
 * The list query (section 4), with the rules of section 7. `from` and `to` are inclusive; a
 * date-only `from` starts at 00:00:00.000Z, a date-only `to` ends at 23:59:59.999Z. The 90-day rule
 * counts between the values as written (`from=2025-01-01&to=2025-04-01` passes). A parameter that
 * is not one of LIST_QUERY_PARAMS is a 400 naming it. The cursor is checked by the service.
 */
export const listQuerySchema = z
  .strictObject(
    {
      from: dateTime(API_MESSAGES.from).optional(),
      to: dateTime(API_MESSAGES.to).optional(),
      currency: z.string(message(API_MESSAGES.currency)).refine(isIsoCurrency, message(API_MESSAGES.currency)).optional(),
      status: z.enum(TRANSACTION_STATUSES, message(API_MESSAGES.status)).optional(),
      cursor: z.string(message(API_MESSAGES.cursor)).min(1, message(API_MESSAGES.cursor)).optional(),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? LIST_PARAM_MESSAGES.unknown(issue.keys[0] ?? '') : undefined) },
  )
  .superRefine((q, ctx) => {
    if (q.from === undefined || q.to === undefined) return;
    const from = Date.parse(q.from);
    if (from > endOf(q.to)) ctx.addIssue({ code: 'custom', message: API_MESSAGES.fromAfterTo });
    else if (Date.parse(q.to) - from > MAX_LIST_RANGE_MS) ctx.addIssue({ code: 'custom', message: API_MESSAGES.rangeTooLong });
  })
  .transform(({ from, to, ...rest }) => ({
    ...rest,
    from: from === undefined ? undefined : new Date(Date.parse(from)),
    to: to === undefined ? undefined : new Date(endOf(to)),
  }));
/** The list query as sent (strings, as in a URL). */
export type ListQueryInput = z.input<typeof listQuerySchema>;
/** The list query once checked: `from` and `to` as Dates, `to` at the last millisecond it covers. */
export type ListQuery = z.output<typeof listQuerySchema>;

/** The envelope of every failure (2.4). */
export const errorEnvelopeSchema = z.object({
  status: z.literal('error'),
  data: z.object({ message: z.string() }),
});
/** The body of every failure (`errorEnvelopeSchema`). */
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

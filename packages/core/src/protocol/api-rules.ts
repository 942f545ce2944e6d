import { TRANSACTION_STATUSES } from './payment-lifecycle.js';

/**
 * The rules of the service's API that are values rather than shapes: its limits, its 400 messages
 * word for word, and the checks behind them (phone, amount, fee). The zod schemas of
 * api-schema.ts are built on these; both are exported from `@payhook/core/api`.
 */

/** Currencies the service accepts at initialize. */
export const SUPPORTED_CURRENCIES = ['ETB', 'USD'] as const;
/** `ETB` or `USD`. */
export type SupportedCurrency = (typeof SUPPORTED_CURRENCIES)[number];

/** Largest amount accepted at initialize, in the currency's minor units (cents). */
export const MAX_AMOUNT_MINOR = 99_999_999_999;
/** Longest span between `from` and `to` in a list query. */
export const MAX_LIST_RANGE_MS = 90 * 24 * 60 * 60 * 1000;
/**
 * Transactions on a list page: fixed, as the official SDKs document it (go-sdk transactions.go
 * `PageSize`); the list takes no `limit`.
 */
export const PAGE_SIZE = 10;

/** The service's 400 messages, word for word. */
export const API_MESSAGES = {
  amount: 'amount must be a positive decimal string with two fraction digits, such as "100.00"',
  amountZero: 'amount must be greater than 0.00',
  amountMax: 'amount must be at most 999999999.99',
  currencyCode: `currencyCode must be one of the supported ISO 4217 codes: ${SUPPORTED_CURRENCIES.join(', ')}`,
  customerPhone:
    'customerPhone must be an Ethiopian mobile number in one of these forms: 09XXXXXXXX, 07XXXXXXXX, 9XXXXXXXX, 7XXXXXXXX, +2519XXXXXXXX, +2517XXXXXXXX, 2519XXXXXXXX or 2517XXXXXXXX',
  merchantReference: 'merchantReference is required: your own reference for the order, 1 to 100 characters',
  callbackUrl: 'callbackUrl must be an absolute https:// URL',
  email: 'email must be an email address',
  firstName: 'firstName must be a string of at most 100 characters',
  lastName: 'lastName must be a string of at most 100 characters',
  returnUrl: 'returnUrl must be an absolute https:// URL (http:// only to a loopback host, on a service run with --allow-http-callbacks)',
  from: 'from must be an ISO 8601 date or date-time, such as 2025-01-31 or 2025-01-31T12:00:00.000Z',
  to: 'to must be an ISO 8601 date or date-time, such as 2025-01-31 (the whole day) or 2025-01-31T12:00:00.000Z',
  fromAfterTo: 'from must not be after to',
  rangeTooLong: 'the range between from and to must not exceed 90 days',
  currency: 'currency must be a three-letter ISO 4217 code in upper case, such as ETB',
  status: `status must be one of: ${TRANSACTION_STATUSES.join(', ')}`,
  cursor: 'cursor is malformed: pass the nextCursor of a previous page unchanged, with the same filters',
  cursorExpired: 'cursor has expired: start again from the first page',
} as const;

const PHONE = /^(?:\+?251|0)?([79]\d{8})$/;

/**
 * The canonical form of an Ethiopian mobile number (`251` + 9 digits), or null when the input is
 * not one of the recognised forms.
 *
 * @example
 * normalizeEthiopianPhone('0912345678'); // '251912345678'
 * normalizeEthiopianPhone('+251712345678'); // '251712345678'
 */
export function normalizeEthiopianPhone(input: string): string | null {
  const m = PHONE.exec(input);
  return m ? `251${m[1]}` : null;
}

/**
 * Parse a money string of the API ("100.00") into minor units, or return the 400 message.
 *
 * @example
 * parseAmount('12.50'); // 1250
 */
export function parseAmount(input: string): number | string {
  if (!/^(?:0|[1-9]\d*)\.\d{2}$/.test(input)) return API_MESSAGES.amount;
  const minor = Number(input.replace('.', ''));
  if (minor === 0) return API_MESSAGES.amountZero;
  if (minor > MAX_AMOUNT_MINOR) return API_MESSAGES.amountMax;
  return minor;
}

/** The service fee's rate in thousandths: 3.5 % (docs/service-gaps.md). */
const SERVICE_FEE_PER_MILLE = 35;

/**
 * The service fee the service charges on `amount` (a money string of the API): 3.5 % of it,
 * rounded half up to the cent (docs/service-gaps.md). Throws on a string that is not money.
 *
 * @example
 * serviceFeeFor('100.00'); // '3.50'
 * serviceFeeFor('0.10'); // '0.00' (0.35 cents rounds down)
 * serviceFeeFor('1500.00'); // '52.50'
 */
export function serviceFeeFor(amount: string): string {
  if (!/^\d{1,9}\.\d{2}$/.test(amount)) {
    throw new TypeError(
      `[@payhook/core] serviceFeeFor: "${amount}" is not an amount of the API; pass a decimal string with two fraction digits, such as "100.00".`,
    );
  }
  const minor = Number(amount.replace('.', ''));
  const fee = Math.floor((minor * SERVICE_FEE_PER_MILLE + 500) / 1000);
  return `${Math.floor(fee / 100)}.${String(fee % 100).padStart(2, '0')}`;
}

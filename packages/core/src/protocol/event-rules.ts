/**
 * The payload's field rules that the zod schema (./event-schema.ts) and the hand check
 * (./event-check.ts) share, so the two cannot drift on a pattern or its message.
 */
export const MONEY = /^\d{1,9}\.\d{2}$/;
export const MONEY_MESSAGE = 'a decimal string with two fraction digits';
export const CURRENCY = /^[A-Z]{3}$/;
export const CURRENCY_MESSAGE = 'an ISO 4217 code';

/**
 * A customer's email or phone as eraseDeliveries matches it: a whole value, never a part of one.
 * A kept body names its customer in `customer.email` and `customer.phone`; a refusal keeps only a
 * printable prefix of what a stranger sent, where an address or a number counts only where it
 * stands whole (not inside a longer address, word or number), so that `.com`, `@` or `0911`
 * cannot sweep away every refusal, the evidence of an attack with them.
 */
const NAME = '[@payhook/core]';

/** The characters of an address's local part (RFC 5322's atext, and the dot). */
const LOCAL = "[\\p{L}\\p{N}.!#$%&'*+/=?^_`{|}~-]";
/** A domain: labels of letters, digits and hyphens, at least two, joined by dots. */
const DOMAIN = '[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]*[\\p{L}\\p{N}])?(?:\\.[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]*[\\p{L}\\p{N}])?)+';
const ADDRESS = new RegExp(`^(?!\\.)(?!.*\\.\\.)${LOCAL}{1,64}(?<!\\.)@${DOMAIN}$`, 'u');
/** An address standing whole in a text: nothing of an address just before it, nor after it. */
const ADDRESS_IN_TEXT = new RegExp(`(?<!${LOCAL})${LOCAL}+@${DOMAIN}(?![\\p{L}\\p{N}-]|\\.[\\p{L}\\p{N}])`, 'gu');

/** The fewest and most digits a phone number has (E.164 allows 15). */
const MIN_DIGITS = 7;
const MAX_DIGITS = 15;
const PHONE = /^\+?[\d\s().-]+$/;
/** A run of a phone number's characters standing whole in a text: no letter, digit or _ around it. */
const PHONE_IN_TEXT = /(?<![\p{L}\p{N}_+])\+?\d[\d\s().-]*\d(?![\p{L}\p{N}_])/gu;

const digits = (s: string) => s.replace(/\D/g, '');

/**
 * The address to match, lower-cased, or a TypeError that says what an address is. The value is
 * not repeated in the message: it names a customer, and the message reaches logs.
 */
export function emailKey(email: string): string {
  const key = email.trim().toLowerCase();
  if (key.length > 254 || !ADDRESS.test(key)) {
    throw new TypeError(
      `${NAME} eraseDeliveries: the email must be one whole address, like ada@example.com (a name, one @, a domain with a dot; no spaces): a customer is erased by their address, never by a part of one.`,
    );
  }
  return key;
}

/** The phone number's digits, or a TypeError that says what a phone number is. */
export function phoneKey(phone: string): string {
  const key = digits(phone);
  if (!PHONE.test(phone.trim()) || key.length < MIN_DIGITS || key.length > MAX_DIGITS) {
    throw new TypeError(
      `${NAME} eraseDeliveries: the phone must be one whole number of ${MIN_DIGITS} to ${MAX_DIGITS} digits, like +251 911 234 567 (digits, spaces, + ( ) - . only): a customer is erased by their number, never by a part of one.`,
    );
  }
  return key;
}

/** A refusal's prefix with its escapes (`\u0000`, `\n`…) as spaces: what they stood for ends a value. */
const unescaped = (prefix: string) => prefix.replace(/\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, ' ');

/** Whether a refusal's prefix names the address `key` (lower case) whole. */
export function prefixNamesEmail(prefix: string, key: string): boolean {
  for (const [found] of unescaped(prefix).matchAll(ADDRESS_IN_TEXT)) if (found.toLowerCase() === key) return true;
  return false;
}

/** Whether a refusal's prefix names the phone number of digits `key` whole. */
export function prefixNamesPhone(prefix: string, key: string): boolean {
  for (const [found] of unescaped(prefix).matchAll(PHONE_IN_TEXT)) if (digits(found) === key) return true;
  return false;
}

/** Whether a kept body's customer phone is the number of digits `key`. */
export const samePhone = (phone: string, key: string): boolean => digits(phone) === key;

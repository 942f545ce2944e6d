/**
 * What may be shown of text anyone sent: the ledger's refusal prefixes, and what the `payhook`
 * command prints of a record (a 401's reference, body and error are the sender's text). Printed
 * raw, an ESC starts a terminal sequence (OSC 8 links, OSC 52 clipboard writes, a screen clear), a
 * newline or carriage return forges a row, a bidi control reorders what is shown. These characters
 * are written out visibly: C0 controls (tab and newline too), DEL, C1 controls, the line and
 * paragraph separators (U+2028/2029), the bidi controls (U+061C, U+200E/200F, U+202A-202E,
 * U+2066-2069), the BOM, and lone surrogates (which no store or terminal takes as they are).
 */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this escapes
  /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const hex = (c: string, digits: number) => c.charCodeAt(0).toString(16).padStart(digits, '0');

/**
 * `text` with every unsafe character escaped: as `\xNN` (below U+0100) or `\uXXXX`, or, with
 * `json`, always as `\uXXXX`, so that a line of JSON.stringify stays JSON (which escapes C0
 * itself, but not DEL, C1, U+2028/2029 or bidi controls).
 *
 * @example
 * escapeText('ref\x1b[2J\r\n') // 'ref\\x1b[2J\\x0d\\x0a'
 */
export function escapeText(text: string, json = false): string {
  return text.replace(UNSAFE, (c) => (json || c.charCodeAt(0) > 0xff ? `\\u${hex(c, 4)}` : `\\x${hex(c, 2)}`));
}

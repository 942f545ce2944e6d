import { escapeText } from './escape-text.js';

// The one HTML tag of the board's and the reference service's pages (issue 55): the stricter
// escaping of the two they had, so text anyone sent is safe on a page and in a terminal it is copied to.

/** Markup that is already safe; everything else put into `html` is escaped. */
export class Html {
  /** @param value The markup, as it goes into the page. */
  constructor(readonly value: string) {}
  /** The markup, so that it joins strings as it is. */
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text anyone may have written (a refused delivery's reference, headers, body), made safe for a
 * page: control, bidi and lone surrogate characters written out as `\xNN` or `\uXXXX` (so that
 * copying a value to a terminal cannot run a sequence, and nothing reorders what is shown), then
 * the markup characters escaped.
 */
export const escapeHtml = (text: string): string => escapeText(text).replace(/[&<>"']/g, (c) => ESCAPES[c]!);

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * A template tag that escapes every value put into it, unless it is itself `html`.
 *
 * @example
 * html`<td>${entry.reference}</td>`; // "<td>&lt;script&gt;…</td>" for a hostile reference
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? render(values[i]) : ''), ''));
}

/** A multi-line text (a pretty-printed body) escaped line by line, its newlines kept. */
export const lines = (text: string): Html => new Html(text.split('\n').map(escapeHtml).join('\n'));

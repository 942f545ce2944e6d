import { describe, expect, it } from 'vitest';
import { escapeText } from '../../src/base/escape-text.js';
import { escapeHtml, html, lines } from '../../src/base/html.js';

// What a stranger's text goes through before a terminal or a log line shows it (the CLI, the ledger's JSON lines).
describe('escapeText writes out every character its doc comment promises', () => {
  /** Each promised character apart from C0 and C1, named, with its escape (`\uXXXX` above U+00FF in both forms). */
  const NAMED: [string, string, string][] = [
    ['U+061C ARABIC LETTER MARK', '\u061c', '\\u061c'],
    ['U+200E LEFT-TO-RIGHT MARK', '\u200e', '\\u200e'],
    ['U+200F RIGHT-TO-LEFT MARK', '\u200f', '\\u200f'],
    ['U+2028 LINE SEPARATOR', '\u2028', '\\u2028'],
    ['U+2029 PARAGRAPH SEPARATOR', '\u2029', '\\u2029'],
    ['U+202A LEFT-TO-RIGHT EMBEDDING', '\u202a', '\\u202a'],
    ['U+202B RIGHT-TO-LEFT EMBEDDING', '\u202b', '\\u202b'],
    ['U+202C POP DIRECTIONAL FORMATTING', '\u202c', '\\u202c'],
    ['U+202D LEFT-TO-RIGHT OVERRIDE', '\u202d', '\\u202d'],
    ['U+202E RIGHT-TO-LEFT OVERRIDE', '\u202e', '\\u202e'],
    ['U+2066 LEFT-TO-RIGHT ISOLATE', '\u2066', '\\u2066'],
    ['U+2067 RIGHT-TO-LEFT ISOLATE', '\u2067', '\\u2067'],
    ['U+2068 FIRST STRONG ISOLATE', '\u2068', '\\u2068'],
    ['U+2069 POP DIRECTIONAL ISOLATE', '\u2069', '\\u2069'],
    ['U+FEFF BYTE ORDER MARK', '\ufeff', '\\ufeff'],
  ];

  it.each(NAMED)('%s, as \\uXXXX in text and in JSON', (name, char, escaped) => {
    expect(escapeText(`a${char}b`), `${name} left raw`).not.toContain(char);
    expect(escapeText(`a${char}b`)).toBe(`a${escaped}b`);
    expect(escapeText(`a${char}b`, true)).toBe(`a${escaped}b`);
  });

  it('C0 (tab and newline too), DEL and C1: as \\xNN in text, \\u00NN in JSON', () => {
    expect(escapeText('\t\n\r\x1b[2J\x7f\x85\x9b')).toBe('\\x09\\x0a\\x0d\\x1b[2J\\x7f\\x85\\x9b');
    expect(escapeText('\t\n\r\x1b[2J\x7f\x85\x9b', true)).toBe('\\u0009\\u000a\\u000d\\u001b[2J\\u007f\\u0085\\u009b');
    const controls = [...Array.from({ length: 0x20 }, (_, i) => i), ...Array.from({ length: 0x9f - 0x7f + 1 }, (_, i) => 0x7f + i)];
    expect(controls).toHaveLength(32 + 33);
    for (const code of controls) {
      const hex = code.toString(16).padStart(2, '0');
      expect(escapeText(`a${String.fromCharCode(code)}b`), `U+00${hex}`).toBe(`a\\x${hex}b`);
      expect(escapeText(`a${String.fromCharCode(code)}b`, true), `U+00${hex}`).toBe(`a\\u00${hex}b`);
    }
  });

  it('lone surrogates, high or low, wherever they stand; a pair stays whole', () => {
    expect(escapeText('a\ud83db')).toBe('a\\ud83db');
    expect(escapeText('a\ude00b')).toBe('a\\ude00b');
    expect(escapeText('end\ud83d')).toBe('end\\ud83d');
    expect(escapeText('\ude00start')).toBe('\\ude00start');
    // Low before high is two lone halves; a high before a pair is lone, the pair is not.
    expect(escapeText('\ude00\ud83d')).toBe('\\ude00\\ud83d');
    expect(escapeText('\ud83d\ud83d\ude00')).toBe('\\ud83d\ud83d\ude00');
    expect(escapeText('\ud83d\ude00 \udbff\udfff')).toBe('\ud83d\ude00 \udbff\udfff');
  });

  it('leaves the neighbours of each range alone, and a JSON line escaped stays the same JSON', () => {
    const safe = ' ~\u00a0\u00a1\u061b\u061d\u200d\u2027\u202f\u2065\u206a\ufefe\ufffd\u00e9';
    expect(escapeText(safe)).toBe(safe);
    expect(escapeText(safe, true)).toBe(safe);
    const hostile = `ref${NAMED.map(([, char]) => char).join('')}\x00\x1b\x7f\x9f\ud83d\ude00\ude00`;
    const line = escapeText(JSON.stringify({ reference: hostile }), true);
    expect(JSON.parse(line)).toEqual({ reference: hostile });
    // Nothing a terminal acts on is left raw: only printable ASCII, then the untouched pair.
    expect(line.replace('\ud83d\ude00', '')).toMatch(/^[\x20-\x7e]+$/);
  });
});

// The html tag the board and the reference service render their pages with (base/html.ts).
describe('the template tag', () => {
  it('escapes every markup character and writes control and bidi characters out', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
    expect(escapeHtml('a\u001b[2J\u202eb')).toBe('a\\x1b[2J\\u202eb');
  });

  it('puts values in as text, lists joined, nothing for null, undefined and false, and markup only when it is html', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${'<x>'}|${['a', '<', inner]}|${null}|${undefined}|${false}|${0}|${true}</p>`.value).toBe(
      '<p>&lt;x&gt;|a&lt;<b>&lt;i&gt;</b>||||0|true</p>',
    );
    expect(html`${'only'}`.value).toBe('only');
    expect(String(html`<p>${1}</p>`)).toBe('<p>1</p>');
    expect(lines('<a>\n\tb').value).toBe('&lt;a&gt;\n\\x09b');
  });
});

import { createReceiver, type LedgerEntry } from '@payhook/core';
import { createEvent, signedRequest } from '@payhook/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import { forgedId, ledgerKinds, payhook } from './trust-helpers.js';

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();
const SECRET = 'whsec_cli_escape';

/** References a sender chose, sent unsigned: each answered 401, and recorded with its reference. */
const HOSTILE = [
  'ref_link\x1b]8;;http://evil\x07click\x1b]8;;\x07',
  'ref_clear\x1b[2J\x1b[H',
  'ref_row\r\n01abc-0000-aaaaaaaa  2026-01-01T00:00:00.000Z  webhook  payment.success  ref_paid  valid  200 processed  1ms',
  'ref_clip\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07',
];
/** What must never reach the terminal raw: ESC, CR, BEL, LF inside a value, C1 CSI, bidi override, line separator. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters the CLI must escape
const RAW = /[\x1b\r\x07\x9b\u202e\u2028]/;

/**
 * Issue 30: `payhook deliveries list/show` print what senders wrote; every value is escaped
 * (\xNN, \uXXXX) so no terminal sequence, forged row or reordered text reaches the terminal.
 */
describe.each(ledgerKinds(redisUrl, pgUrl))('the payhook command prints a $kind ledger without raw control characters', (kind) => {
  const skip = !kind.url || !pgUrl;
  const name = `payhook_escape_${kind.kind}_${process.pid}_${Date.now().toString(36)}`;
  let store: ReturnType<typeof kind.open>;
  let forged: LedgerEntry;
  const env = () => ({
    TRUST_STORE: kind.kind,
    TRUST_URL: kind.url!,
    TRUST_NAME: name,
    TRUST_SECRET: SECRET,
    TRUST_EFFECTS: pgUrl!,
    TRUST_RUN: name,
  });

  beforeAll(async () => {
    if (skip) return;
    store = kind.open(name);
    const receiver = createReceiver({ secret: SECRET, store, logger: () => {} }).onAny(() => {});
    for (const reference of HOSTILE) {
      const r = await receiver.handle(signedRequest(createEvent('payment.success', { reference }), { secret: 'whsec_not_the_one' }));
      expect(r.status).toBe(401);
    }
    await vi.waitFor(async () => expect(await store.ledger!.list()).toHaveLength(HOSTILE.length));
    // And one written straight into the store: escapes in its event, error and (signed, so kept) body.
    const at = Date.now();
    const body = JSON.stringify({
      ...createEvent('payment.success', { reference: 'ref_body' }),
      note: 'x\u009b31m\u202edesrever\u2028\x7f',
    });
    forged = {
      id: forgedId(at),
      receivedAt: at,
      source: 'webhook',
      reference: 'ref_body',
      event: 'payment.success\u202e',
      outcome: 'failed',
      status: 500,
      durationMs: 1,
      signature: 'valid',
      body,
      bodyEncoding: 'utf8',
      error: 'boom\x1b[31m\r\nprocessed',
    };
    await kind.forge(name, forged);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    if (!skip) await kind.drop(name);
  });

  it.skipIf(skip)(
    'list: one row per record, each value escaped, with the SIG column',
    async () => {
      const { stdout, stderr, code } = await payhook(['deliveries', 'list'], env());
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).not.toMatch(RAW);
      const lines = stdout.split('\n');
      expect(lines[0]).toMatch(/^ID\s+RECEIVED\s+SOURCE\s+EVENT\s+REFERENCE\s+SIG\s+ANSWER\s+TOOK$/);
      const rows = lines.filter((l) => /^\S+\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s/.test(l));
      expect(rows).toHaveLength(HOSTILE.length + 1);
      expect(rows.filter((l) => /\s+invalid\s+401 unauthorized\s/.test(l))).toHaveLength(HOSTILE.length);
      expect(rows.filter((l) => /\s+valid\s+500 failed\s/.test(l))).toHaveLength(1);
      // The forged row stays inside its reference, escaped, on the line of the 401 that carried it.
      expect(rows.filter((l) => l.includes('200 processed'))).toEqual([
        expect.stringMatching(/ref_row\\x0d\\x0a01abc.*200 processed.*401 unauthorized/),
      ]);
      expect(stdout).toContain('ref_link\\x1b]8;;http://evil\\x07click');
      expect(stdout).toContain('ref_clear\\x1b[2J');
      expect(stdout).toContain('payment.success\\u202e');
      expect(stdout).toMatch(new RegExp(`\n${HOSTILE.length + 1} shown\n$`));
    },
    60_000,
  );

  it.skipIf(skip)(
    'show: the fields, the pretty-printed body and the error, escaped',
    async () => {
      const { stdout, code } = await payhook(['deliveries', 'show', forged.id], env());
      expect(code).toBe(0);
      expect(stdout).not.toMatch(RAW);
      expect(stdout).toContain('error: boom\\x1b[31m\\x0d\\x0aprocessed');
      expect(stdout).toContain('event: payment.success\\u202e');
      expect(stdout).toMatch(/body:\n\{\n {2}"event": "payment.success",/);
      expect(stdout).toContain('"note": "x\\x9b31m\\u202edesrever\\u2028\\x7f"');
      const [refusal] = await store.ledger!.list({ reference: HOSTILE[0] });
      const shown = await payhook(['deliveries', 'show', refusal!.id], env());
      expect(shown.stdout).not.toMatch(RAW);
      expect(shown.stdout).toContain('reference: ref_link\\x1b]8;;http://evil\\x07click');
    },
    60_000,
  );

  it.skipIf(skip)(
    '--json stays one JSON record per line, the values intact, with no raw control or separator character',
    async () => {
      const { stdout, code } = await payhook(['deliveries', 'list', '--json'], env());
      expect(code).toBe(0);
      expect(stdout).not.toMatch(RAW);
      const records = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as LedgerEntry);
      expect(records.map((e) => e.reference).sort()).toEqual([...HOSTILE, 'ref_body'].sort());
      expect(records.find((e) => e.id === forged.id)).toMatchObject({ event: forged.event, error: forged.error, body: forged.body });
    },
    60_000,
  );
});

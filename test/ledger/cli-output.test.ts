import type { LedgerEntry } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import { forgedId, ledgerKinds, payhook } from './trust-helpers.js';

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();

/**
 * What `payhook deliveries list`, `deliveries show` and `dead-letters list` print, on records
 * written straight into each store: the next page only when there is one, every time in ISO 8601
 * and the fields in one order whatever the store, and an empty dead-letter list said as such.
 */
describe.each(ledgerKinds(redisUrl, pgUrl))('the payhook command on a $kind ledger', (kind) => {
  const skip = !kind.url || !pgUrl;
  const name = `payhook_output_${kind.kind}_${process.pid}_${Date.now().toString(36)}`;
  const env = () => ({
    TRUST_STORE: kind.kind,
    TRUST_URL: kind.url!,
    TRUST_NAME: name,
    TRUST_SECRET: 'whsec_cli_output',
    TRUST_EFFECTS: pgUrl!,
    TRUST_RUN: name,
  });
  let store: ReturnType<typeof kind.open>;
  // An hour ago, within the ledger's retention by the command's clock; the records a minute apart.
  const at = Date.now() - 60 * 60_000;
  const plain = (i: number): LedgerEntry => ({
    id: forgedId(at + i * 60_000),
    receivedAt: at + i * 60_000,
    source: 'webhook',
    reference: `ref_${i}`,
    event: 'payment.success',
    outcome: 'processed',
    status: 200,
    durationMs: 5,
    signature: 'valid',
  });
  // Its keys in the reverse of the printed order (Redis keeps them so, Postgres's jsonb by length): 202, failed after, dead letter retried.
  const late: LedgerEntry = {
    body: '{"event":"payment.success","data":{"reference":"ref_late"}}',
    deadLetter: { retriedBy: 'replay_1', at: at + 901, reason: 'late-failed' },
    late: { error: 'the inventory service is down', durationMs: 900, outcome: 'failed' },
    bodyEncoding: 'utf8',
    signatureHeader: 't=1,v1=ab',
    secretIndex: 0,
    signature: 'valid',
    attempt: 1,
    durationMs: 300,
    status: 202,
    outcome: 'accepted',
    dedupeKey: 'ref_late:payment.success',
    event: 'payment.success',
    reference: 'ref_late',
    source: 'webhook',
    receivedAt: at,
    id: forgedId(at),
  };
  const records = [late, plain(1), plain(2)];

  beforeAll(async () => {
    if (skip) return;
    store = kind.open(name);
    await store.ledger!.list(); // creates Postgres's table
    for (const e of records) await kind.forge(name, e);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    if (!skip) await kind.drop(name);
  });

  const footer = (stdout: string) => stdout.trimEnd().split('\n').at(-1);

  it.skipIf(skip)(
    'list offers the next page only when a record lies past this one',
    async () => {
      // Exactly a page's worth: no next page.
      const all = await payhook(['deliveries', 'list', '--limit', '3'], env());
      expect(all.code).toBe(0);
      for (const e of records) expect(all.stdout).toContain(e.id);
      expect(footer(all.stdout)).toBe('3 shown');
      const first = await payhook(['deliveries', 'list', '--limit', '2'], env());
      expect(footer(first.stdout)).toBe(`2 shown; the next page: --before ${records[1]!.id}`);
      const second = await payhook(['deliveries', 'list', '--limit', '2', '--before', records[1]!.id], env());
      expect(second.stdout).toContain(records[0]!.id);
      expect(footer(second.stdout)).toBe('1 shown');
    },
    60_000,
  );

  it.skipIf(skip)(
    'show prints every time in ISO 8601 and the fields in one order, whatever the store returns',
    async () => {
      const shown = await payhook(['deliveries', 'show', late.id], env());
      expect(shown.stderr).toBe('');
      expect(shown.stdout).toBe(
        [
          `id: ${late.id}`,
          `receivedAt: ${new Date(at).toISOString()}`,
          'source: webhook',
          'reference: ref_late',
          'event: payment.success',
          'dedupeKey: ref_late:payment.success',
          'outcome: accepted',
          'status: 202',
          'durationMs: 300',
          'attempt: 1',
          'signature: valid',
          'secretIndex: 0',
          'signatureHeader: t=1,v1=ab',
          'bodyEncoding: utf8',
          'late.outcome: failed',
          'late.durationMs: 900',
          'late.error: the inventory service is down',
          'deadLetter.reason: late-failed',
          `deadLetter.at: ${new Date(at + 901).toISOString()}`,
          'deadLetter.retriedBy: replay_1',
          'body:',
          '{',
          '  "event": "payment.success",',
          '  "data": {',
          '    "reference": "ref_late"',
          '  }',
          '}',
          '',
        ].join('\n'),
      );
    },
    60_000,
  );

  it.skipIf(skip)(
    'dead-letters list says there are no open dead letters when the only one was retried',
    async () => {
      expect(await payhook(['dead-letters', 'list'], env())).toEqual({ code: 0, stdout: 'no open dead letters\n', stderr: '' });
    },
    60_000,
  );
});

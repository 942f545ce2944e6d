// Issue 51: after a dead letter's retry the banner says what its replay did; a failure that a
// later attempt of its payment settled reads as resolved, on the list, a delivery's page, its
// timeline and a live row.
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '@payhook/core';
import { BASE, boardApps, boardOver, ledgerRecord, RECORDS_AT } from '@payhook/test-support/apps/board-app';
import { openLive } from '../sse.js';

const start = boardApps();
const T0 = RECORDS_AT;
/** A record of payment ref_a unless `over` says otherwise. */
const record = (id: string, over: Partial<LedgerEntry> = {}): LedgerEntry => ledgerRecord(id, { reference: 'ref_a', ...over });
const dead = (retriedBy?: string) => ({ outcome: 'rejected' as const, deadLetter: { reason: 'rejected' as const, at: T0, retriedBy } });

/** Badges as text: "<failed:bad>", so that the tone is part of what is compared. */
const plain = (html: string) =>
  html
    .replace(/<span class="outcome ([a-z]*)"(?: title="[^"]*")?>([^<]*)<\/span>/g, '<$2:$1>')
    .replace(/<a href="([^"]*)">([^<]*)<\/a>/g, '[$2]($1)')
    .replace(/<\/?span[^>]*>/g, '');
const at = (id: string) => `${BASE}/deliveries/${id}`;

describe('the banner after a dead letter’s retry', () => {
  const replays = [
    record('d_1', dead('r_1')),
    record('r_1', { source: 'replay', replayOf: 'd_1', attempt: 2 }),
    record('d_2', dead('r_2')),
    record('r_2', { source: 'replay', replayOf: 'd_2', outcome: 'duplicate', attempt: undefined }),
    record('d_3', dead()),
    record('r_3', { source: 'replay', replayOf: 'd_3', outcome: 'failed', status: 500 }),
    record('d_4', dead('r_4')),
    record('r_4', { source: 'replay', replayOf: 'd_4', ...dead() }),
    record('d_5', dead()),
    record('r_5', { source: 'replay', replayOf: 'd_5', outcome: 'accepted', status: 202 }),
    record('d_6', dead()),
    record('r_6', { source: 'replay', replayOf: 'd_6', outcome: 'accepted', status: 202, late: { outcome: 'failed', durationMs: 9 } }),
  ];
  const open = (id: string) => ` [Open the replay](${at(id)}).`;

  it('says what the replay did: processed, duplicate, failed or rejected again, not settled; and whether the letter closed', async () => {
    const get = await boardOver(replays);
    const banner = async (id: string, replay?: string) =>
      plain(
        /<p class="notice" role="status">(.*?)<\/p>/.exec(
          await get(`/deliveries/${id}?after=retry${replay ? `&replay=${replay}` : ''}`),
        )![1]!,
      );
    expect(await banner('d_1', 'r_1')).toBe(`Retried: <processed:good> (200). The dead letter is closed.${open('r_1')}`);
    expect(await banner('d_2', 'r_2')).toBe(
      `Retried: <duplicate:good> (200): the event was already done, so nothing ran twice. The dead letter is closed.${open('r_2')}`,
    );
    expect(await banner('d_3', 'r_3')).toBe(`Retried: failed again, <failed:bad> (500). The dead letter is still open.${open('r_3')}`);
    expect(await banner('d_4', 'r_4')).toBe(
      `Retried: rejected again, <rejected:bad> (200). The dead letter is closed: the replay is a dead letter in its place.${open('r_4')}`,
    );
    expect(await banner('d_5', 'r_5')).toBe(
      `Retried: <accepted:warn> (202), not settled yet. The dead letter is still open.${open('r_5')}`,
    );
    expect(await banner('d_6', 'r_6')).toBe(
      `Retried: failed again, <accepted:warn> → <failed:bad> (202). The dead letter is still open.${open('r_6')}`,
    );
  });

  it('without its replay’s record, or naming another record’s replay, says only whether the letter closed', async () => {
    const get = await boardOver(replays);
    const banner = async (path: string) => /<p class="notice" role="status">(.*?)<\/p>/.exec(await get(path))![1];
    expect(await banner('/deliveries/d_1?after=retry')).toBe('Retried: the dead letter is closed.');
    expect(await banner('/deliveries/d_3?after=retry&replay=r_404')).toBe('Retried: the dead letter is still open.');
    // A crafted link: r_1 is d_1's replay, not d_3's.
    expect(await banner('/deliveries/d_3?after=retry&replay=r_1')).toBe('Retried: the dead letter is still open.');
  });
});

describe('a failure a later attempt settled', () => {
  const failed = { outcome: 'failed' as const, status: 500 };
  const entries = [
    record('d_10', { signature: 'invalid', outcome: 'unauthorized', status: 401, attempt: undefined }), // a refusal: the sender's word
    record('d_11', failed),
    record('d_12', { attempt: 2 }),
    record('d_13', { ...failed, attempt: 3 }), // after the success: nothing later settled it
    record('d_20', { reference: 'ref_b', ...failed }),
    record('d_21', { reference: 'ref_b', event: 'payment.refunded' }), // another event of the payment
    record('d_30', { reference: 'ref_c', account: 'acct_X', ...failed }),
    record('d_31', { reference: 'ref_c', account: 'acct_Y' }), // another account's payment
    record('d_40', { reference: 'ref_d', outcome: 'accepted', status: 202, late: { outcome: 'failed', durationMs: 4 } }),
    record('d_41', { reference: 'ref_d', outcome: 'duplicate', attempt: undefined }),
    record('d_50', { reference: 'ref_e', ...dead() }),
    record('d_51', { reference: 'ref_e', source: 'replay', replayOf: 'd_50', attempt: 2 }),
    record('d_60', { reference: 'ref_f', ...dead('r_60') }),
  ];
  const note = (id: string, name: string) => ` resolved by [${name}](${at(id)})`;

  it('reads as resolved on the list, by the rule: same account, reference and event, later, settled green; a refusal never', async () => {
    const page = await (await boardOver(entries))('/');
    const outcome = (id: string) => plain(new RegExp(`<tr data-id="${id}">.*?<td data-label="Outcome">(.*?)</td>`).exec(page)![1]!);
    expect(outcome('d_11')).toBe(`<failed:resolved>${note('d_12', 'attempt 2')}`);
    expect(outcome('d_10')).toBe('<unauthorized:bad>');
    expect(outcome('d_13')).toBe('<failed:bad>');
    expect(outcome('d_20')).toBe('<failed:bad>');
    expect(outcome('d_30')).toBe('<failed:bad>');
    // A late failure: its answer keeps its tone; a duplicate claimed nothing, so it is named by where it came from.
    expect(outcome('d_40')).toBe(`<accepted:warn> → <failed:resolved>${note('d_41', 'a later webhook')}`);
    // The dead letter stays shown: it is open in the ledger until it is retried.
    expect(outcome('d_50')).toBe(`<rejected:resolved>${note('d_51', 'a later replay')} <dead letter:bad>`);
    // A dead letter a retry closed is no longer red either.
    expect(outcome('d_60')).toBe('<rejected:bad> <dead letter, retried:resolved>');
    // Filtered to failures, the attempt that settled it is not on the page, and is found all the same.
    const failures = await (await boardOver(entries))('/?outcome=failed&reference=ref_a');
    expect(plain(/<tr data-id="d_11">.*?<td data-label="Outcome">(.*?)<\/td>/.exec(failures)![1]!)).toBe(
      `<failed:resolved>${note('d_12', 'attempt 2')}`,
    );
  });

  it('reads as resolved on a delivery’s page and in its timeline', async () => {
    const get = await boardOver(entries);
    const fact = (page: string, name: string) => plain(new RegExp(`<dt>${name}</dt><dd>(.*?)</dd>`).exec(page)![1]!);
    const d11 = await get('/deliveries/d_11');
    expect(fact(d11, 'Answer')).toBe(`<failed:resolved>, 500, in 3 ms${note('d_12', 'attempt 2')}`);
    const items = plain(/<ol class="timeline" id="timeline">(.*?)<\/ol>/s.exec(d11)![1]!).split('</li>');
    expect(items.map((li) => /: (.*?) \(\d+\)/.exec(li)?.[1])).toEqual([
      '<unauthorized:bad>',
      `<failed:resolved>${note('d_12', 'attempt 2')}`,
      '<processed:good>',
      '<failed:bad>',
      undefined,
    ]);
    const d40 = await get('/deliveries/d_40');
    expect(fact(d40, 'Answer')).toBe('<accepted:warn>, 202, in 3 ms');
    expect(fact(d40, 'Late outcome')).toBe(`<failed:resolved> after 4 ms${note('d_41', 'a later webhook')}`);
    expect(fact(await get('/deliveries/d_13'), 'Answer')).toBe('<failed:bad>, 500, in 3 ms');
  });

  it('reads as resolved on a live row when the attempt that settled it comes in the same look', async () => {
    const { origin, receiver } = await start({ live: { intervalMs: 20 } });
    const now = Date.now();
    await receiver.store.ledger!.append([record('l_1', { ...failed, receivedAt: now }), record('l_2', { attempt: 2, receivedAt: now })]);
    const stream = await openLive(`${origin}${BASE}/live`);
    const [first, second] = await stream.until(2);
    stream.close();
    expect(first!.data).toMatchObject({ id: 'l_1', outcome: 'failed', tone: 'resolved', resolved: 'attempt 2', resolvedHref: at('l_2') });
    expect(first!.data.deadTone).toBe('');
    expect(second!.data).toMatchObject({ id: 'l_2', tone: 'good', resolved: '', resolvedHref: '' });
  });
});

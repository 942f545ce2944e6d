import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore } from '../src/index.js';

const secret = 'whsec_order_guard';
const quiet = { info() {}, warn() {}, error() {} };
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/*
 * The ordering guard counts an earlier event as run once it happened before the store's memory:
 * its done record may be gone. The store's clock and the service's may disagree, so the edge has a
 * margin (docs/decisions.md, "Ordering on the service's truth"): a tenth of the retention, at most
 * an hour. An earlier event within the margin of the edge counts as forgotten too; one past it,
 * well within the retention, is waited for. Here the success's time is the payload's paidAt (hold,
 * no client), on a manual clock the receiver and its store share.
 */
describe("the ordering guard's margin at the edge of the store's retention", () => {
  it.each([
    ['30 minutes: a tenth, 3 minutes', 30 * MINUTE, 3 * MINUTE],
    ['10 hours: a tenth, 1 hour', 10 * HOUR, HOUR],
    ['24 hours: at most an hour', 24 * HOUR, HOUR],
  ])('retention %s', async (_, retentionMs, marginMs) => {
    const clock = manualClock(1_700_000_000_000);
    const ran: string[] = [];
    const receiver = createReceiver({ secret, clock, store: memoryStore({ clock, retentionMs }), ordering: 'hold', logger: quiet })
      .on('payment.success', () => void ran.push('payment.success'))
      .on('payment.refunding', () => void ran.push('payment.refunding'));
    /** A refunding whose success was paid `ago` ms before now, and never delivered here: its answer. */
    const refunding = async (ago: number) => {
      const event = createEvent('payment.refunding', { paidAt: new Date(clock.now() - ago).toISOString() });
      const r = await receiver.handle(signedRequest(event, { secret }));
      return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
    };
    const edge = retentionMs - marginMs;
    const answers = {
      'paid before the retention': await refunding(retentionMs + SECOND),
      'paid a second inside the retention': await refunding(retentionMs - SECOND),
      'paid a second inside the margin': await refunding(edge + SECOND),
      'paid a second past the margin': await refunding(edge - SECOND),
      'paid a minute ago': await refunding(MINUTE),
    };
    expect(answers).toEqual({
      'paid before the retention': '200 processed',
      'paid a second inside the retention': '200 processed',
      'paid a second inside the margin': '200 processed',
      'paid a second past the margin': '409 held',
      'paid a minute ago': '409 held',
    });
    // The success counted as run was not run: only the refundings that were let through ran.
    expect(ran).toEqual(['payment.refunding', 'payment.refunding', 'payment.refunding']);
  });
});

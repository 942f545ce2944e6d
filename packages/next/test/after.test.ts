import { createReceiver } from '@payhook/core';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { describe, expect, it, vi } from 'vitest';

// Next's after(), as Next 15.1+ exports it: what the route asked Next to wait for.
const held = vi.hoisted(() => [] as { settled: boolean }[]);
vi.mock('next/server.js', () => ({
  after: (work: Promise<unknown>) => {
    const entry = { settled: false };
    held.push(entry);
    void work.then(() => (entry.settled = true));
  },
}));

const { payhookNext } = await import('../src/index.js');
const secret = 'whsec_next_after';

describe('payhookNext', () => {
  it("keeps a handler past the budget alive with Next's after() until its done record is written", async () => {
    const clock = manualClock(0);
    let made = 0;
    const finished: string[] = [];
    const { POST } = payhookNext(() => {
      made += 1;
      return createReceiver({ secret, budgetMs: 200, clock, logger: { warn() {}, error() {} } }).on('payment.success', async (event) => {
        await clock.sleep(600);
        finished.push(event.reference);
      });
    });
    // Made on the first request, not when the route module loads (`next build` has no secret).
    expect(made).toBe(0);
    const event = createEvent('payment.success');
    const answer = POST(signedRequest(event, { secret }));
    await clock.advance(200);
    expect((await answer).status).toBe(202);
    expect(held.map((h) => h.settled)).toEqual([false]);
    await clock.advance(400);
    await clock.advance(0);
    expect(finished).toEqual([event.reference]);
    expect(held.map((h) => h.settled)).toEqual([true]);
    expect((await POST(signedRequest(createEvent('payment.success'), { secret: 'whsec_wrong' }))).status).toBe(401);
    expect(made).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, type Clock, type DeliveryReport, type LoopBlockedReport } from '../src/index.js';

const secret = 'whsec_loop_watch';

/**
 * A manual clock plus the CPU time handlers "spend": a handler that computes for 3 s moves
 * `now()` by 3 s without ever giving the event loop a turn, exactly as a real one would.
 */
function cpuClock() {
  const virtual = manualClock(0);
  let cpu = 0;
  const clock: Clock = { now: () => virtual.now() + cpu, setTimeout: virtual.setTimeout, clearTimeout: virtual.clearTimeout };
  return { clock, virtual, compute: (ms: number) => void (cpu += ms) };
}

function setup(handlerMs: number, options: { throws?: boolean } = {}) {
  const { clock, virtual, compute } = cpuClock();
  const warnings: { message: string; report: LoopBlockedReport }[] = [];
  const answeredAt: number[] = [];
  const receiver = createReceiver({
    secret,
    clock,
    logger: {
      info: () => void answeredAt.push(clock.now()),
      error: () => void answeredAt.push(clock.now()),
      warn: (report: LoopBlockedReport | DeliveryReport, message: string) => {
        if (!('outcome' in report)) warnings.push({ message, report });
      },
    },
  }).on('payment.success', function renderInvoices() {
    compute(handlerMs);
    if (options.throws) throw new Error('out of paper');
  });
  let sent = 0;
  const deliver = (n: number) =>
    Promise.all(
      Array.from({ length: n }, async () => {
        const response = await receiver.handle(signedRequest(createEvent('payment.success', { reference: `loop_${sent++}` }), { secret }));
        return response.status;
      }),
    );
  return { receiver, virtual, warnings, answeredAt, deliver };
}

describe('a handler that blocks the event loop', () => {
  it('is named, with the answers it made late, once the loop gets a turn', async () => {
    // The case: ten deliveries at once, each computing synchronously for 3 s.
    const { virtual, warnings, answeredAt, deliver } = setup(3_000);
    const statuses = await deliver(10);
    expect(statuses).toEqual(statuses.map(() => 200));
    // Answered at 3, 6, … 30 s: each waited for every handler before it.
    expect(answeredAt).toEqual(statuses.map((_, i) => 3_000 * (i + 1)));
    expect(warnings).toHaveLength(0);

    await virtual.advance(100);
    expect(warnings).toHaveLength(1);
    // 12 s to 30 s: seven answers after the service's 10 s.
    expect(warnings[0]!.report).toEqual({
      blockedBy: [{ handler: 'renderInvoices', event: 'payment.success', runs: 10, longestMs: 3_000, totalMs: 30_000 }],
      lateAnswers: 7,
      stretchMs: 30_000,
    });
    expect(warnings[0]!.message).toMatch(/^\[@payhook\/core\] renderInvoices \(payment\.success: 10 runs, up to 3000 ms each\).*7 answers.*worker thread/);
  });

  it('logs nothing while every answer is inside the service timeout', async () => {
    const { virtual, warnings, deliver } = setup(3_000);
    await deliver(3);
    await virtual.advance(100);
    expect(warnings).toEqual([]);
  });

  it('times a handler that blocks and then throws', async () => {
    const { virtual, warnings, deliver } = setup(2_500, { throws: true });
    const statuses = await deliver(6);
    expect(statuses).toEqual(statuses.map(() => 500));
    await virtual.advance(100);
    // 12.5 s and 15 s are past 10 s.
    expect(warnings.map((w) => w.report.lateAnswers)).toEqual([2]);
  });

  it('starts a new stretch once the loop had a turn, and reports each stretch on its own', async () => {
    const { virtual, warnings, deliver } = setup(4_000);
    await deliver(3); // 4, 8, 12 s: one late
    await virtual.advance(100);
    await deliver(2); // 4, 8 s after the new stretch began: none late
    await virtual.advance(100);
    await deliver(4); // 4 … 16 s: two late
    await virtual.advance(100);
    expect(warnings.map((w) => [w.report.lateAnswers, w.report.blockedBy[0]!.runs])).toEqual([
      [1, 3],
      [2, 4],
    ]);
  });

  it('leaves fast handlers alone', async () => {
    const { virtual, warnings, deliver } = setup(10);
    await deliver(2_000 / 10);
    await virtual.advance(100);
    expect(warnings).toEqual([]);
  });

  it('survives a logger that throws when the warning is due (it is written from a timer)', async () => {
    const { clock, virtual, compute } = cpuClock();
    let calls = 0;
    const receiver = createReceiver({
      secret,
      clock,
      logger: {
        warn: (report: object) => {
          if (!('outcome' in report)) calls += 1;
          throw new Error('log sink down');
        },
      },
    }).on('payment.success', () => compute(6_000));
    for (const reference of ['loop_a', 'loop_b']) {
      expect((await receiver.handle(signedRequest(createEvent('payment.success', { reference }), { secret }))).status).toBe(200);
    }
    // advance() rejects with any error a timer callback threw.
    await expect(virtual.advance(100)).resolves.toBeUndefined();
    expect(calls).toBe(1);
  });
});

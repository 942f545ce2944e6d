import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, type Clock, type DeliveryReport, type LoopBlockedReport } from '../../src/index.js';

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
  /** Each delivery's own line, as logged. */
  const lines: { level: string; message: string; report: DeliveryReport }[] = [];
  const line = (level: string) => (report: DeliveryReport, message: string) => {
    answeredAt.push(clock.now());
    lines.push({ level, message, report });
  };
  const receiver = createReceiver({
    secret,
    clock,
    logger: {
      info: line('info'),
      error: line('error'),
      warn: (report: LoopBlockedReport | DeliveryReport, message: string) => {
        if (!('outcome' in report)) warnings.push({ message, report });
        else line('warn')(report, message);
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
  return { receiver, virtual, warnings, answeredAt, lines, deliver };
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
    expect(warnings[0]!.message).toMatch(
      /^\[@payhook\/core\] renderInvoices \(payment\.success: 10 runs, up to 3000 ms each\).*7 answers.*worker thread/,
    );
  });

  it("puts the evidence on each late delivery's own line at once, though the loop never gets a turn", async () => {
    // The service's retries can keep the loop blocked until the process dies: the summary may never come.
    const { warnings, lines, deliver } = setup(3_000);
    await deliver(10);
    expect(warnings).toHaveLength(0);
    // The first three answered within 10 s, at info with no evidence; the seven after it at warn, each saying why.
    expect(lines.map((l) => l.level)).toEqual([...Array(3).fill('info'), ...Array(7).fill('warn')]);
    expect(lines.slice(0, 3).map((l) => l.report.loopBlocked)).toEqual([undefined, undefined, undefined]);
    expect(lines.slice(3).map((l) => l.report.loopBlocked)).toEqual(
      [12, 15, 18, 21, 24, 27, 30].map((s) => ({ sinceMs: s * 1_000, by: ['renderInvoices'] })),
    );
    expect(lines[3]!.message).toBe(
      "[@payhook/core] delivery processed (200), answered 12 s after renderInvoices began blocking the event loop, past the service's 10 s: it may have given up and will retry. Move CPU-bound work to a worker thread, or hand the event to a queue",
    );
  });

  it('keeps the level of an answer that is worse than a warning (a failed handler stays an error)', async () => {
    const { lines, deliver } = setup(2_500, { throws: true });
    await deliver(6);
    expect(lines.map((l) => [l.level, l.report.loopBlocked?.sinceMs])).toEqual([
      ['error', undefined],
      ['error', undefined],
      ['error', undefined],
      ['error', undefined],
      ['error', 12_500],
      ['error', 15_000],
    ]);
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

import type { LoopWatch, LoopBlockedReport } from '../contracts/handling.js';
import type { Clock } from '../base/clock.js';
import type { EventHandler } from '../contracts/handling.js';
import { SERVICE_TIMEOUT_MS } from '../settings/options.js';

/** A handler that computes synchronously this long holds up every other delivery of the process. */
export const BLOCKING_MS = 50;
/** Two blocking runs this close together: the event loop never got a turn in between (one stretch). */
const STRETCH_GAP_MS = 20;

/**
 * Watch the event loop around handlers. A handler that computes for a long time blocks every
 * delivery behind it: their requests wait unread, so neither the budget nor any timer can answer
 * them until it ends. The watch times each handler's synchronous part; while such runs follow
 * one another, answers sent more than the service's timeout after the stretch began count as
 * late (their requests may have been waiting since then: the bytes' arrival time is not
 * observable). Each late answer carries the evidence on its own report at once (a warning put off
 * until the loop gets a turn may never come, when retries keep starting new blocks); once the loop
 * gets a turn again, one warning sums up the handlers and the late answers. Work a handler does
 * after its first `await` is not timed.
 */
export function createLoopWatch(clock: Clock, warn: (message: string, report: LoopBlockedReport) => void): LoopWatch {
  let stretchStart = 0;
  let stretchEnd = -Infinity;
  let stretchMs = 0;
  let late = 0;
  let flushing = false;
  const blockers = new Map<EventHandler, LoopBlockedReport['blockedBy'][number]>();

  const flush = () => {
    // A run ended since the flush was set: the stretch goes on, look again at the next turn.
    if (clock.now() - stretchEnd < STRETCH_GAP_MS) return void clock.setTimeout(flush, STRETCH_GAP_MS);
    flushing = false;
    if (late === 0) return;
    const report: LoopBlockedReport = { blockedBy: [...blockers.values()], lateAnswers: late, stretchMs };
    late = 0;
    blockers.clear();
    const names = report.blockedBy.map((b) => `${b.handler} (${b.event}: ${b.runs} runs, up to ${b.longestMs} ms each)`).join(', ');
    const answers = report.lateAnswers === 1 ? '1 answer' : `${report.lateAnswers} answers`;
    // On a timer: a logger that throws here would end the process.
    try {
      warn(
        `[@payhook/core] ${names} computed synchronously and blocked the event loop for ${stretchMs} ms in all; ` +
          `${answers} went out more than ${SERVICE_TIMEOUT_MS / 1000} s after that began, when the service may already have given up and will retry. ` +
          'The budget cannot answer while the loop is blocked: move CPU-bound work to a worker thread, or hand the event to a queue.',
        report,
      );
    } catch {}
  };

  return {
    now: () => clock.now(),
    ran(handler, event, index, startedAt) {
      const end = clock.now();
      const ms = end - startedAt;
      if (ms < BLOCKING_MS) return;
      if (startedAt - stretchEnd > STRETCH_GAP_MS) {
        stretchStart = startedAt;
        if (!flushing) blockers.clear();
      }
      stretchEnd = end;
      stretchMs = end - stretchStart;
      const b = blockers.get(handler);
      if (b) {
        b.runs += 1;
        b.totalMs += ms;
        b.longestMs = Math.max(b.longestMs, ms);
      } else {
        blockers.set(handler, { handler: handler.name || `handler #${index + 1}`, event, runs: 1, longestMs: ms, totalMs: ms });
      }
    },
    answered() {
      if (stretchEnd === -Infinity) return undefined;
      const now = clock.now();
      if (now - stretchEnd > STRETCH_GAP_MS) {
        // The loop had a turn since the last blocking run: that stretch is over.
        stretchEnd = -Infinity;
        return undefined;
      }
      if (now - stretchStart <= SERVICE_TIMEOUT_MS) return undefined;
      late += 1;
      if (!flushing) {
        flushing = true;
        clock.setTimeout(flush, STRETCH_GAP_MS);
      }
      return { sinceMs: now - stretchStart, by: [...blockers.values()].map((b) => b.handler) };
    },
  };
}

import { appendFileSync } from 'node:fs';
import { createReceiver, NonRetriableError, type DeliveryReport, type Receiver } from '@payhook/core';

/** The receiver every adapter is tested with, and the Next app runs. */
export const SCENARIO = {
  secrets: ['whsec_conformance_current', 'whsec_conformance_previous'],
  budgetMs: 800,
  maxBodyBytes: 4096,
  /** How long a 'slow' handler takes: past the budget, so the answer is 202. */
  slowMs: 1600,
  /** How long a 'hold' handler takes: long enough for concurrent duplicates to overlap. */
  holdMs: 100,
} as const;

/** One line of the log file: a handler run, or an outcome the receiver reported. */
export type LogLine =
  | { kind: 'run'; reference: string; event: string; merchantReference: string; secretIndex: number | null; attempt: number }
  | { kind: 'report'; outcome: string; status: number; reference?: string; late?: boolean; error?: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The receiver of the scenario. Handlers behave by `merchantReference`: 'throw-once' throws on
 * the first attempt, 'reject' throws NonRetriableError, 'slow' outlasts the budget, 'hold' waits
 * a little. Runs and reports are appended as JSON lines to `logFile`, which the tests read.
 */
export function scenarioReceiver(logFile: string | undefined): Receiver {
  const write = (line: LogLine) => {
    if (logFile) appendFileSync(logFile, `${JSON.stringify(line)}\n`);
  };
  const log = (_message: string, r: DeliveryReport) =>
    write({
      kind: 'report',
      outcome: r.outcome,
      status: r.status,
      reference: r.reference,
      late: r.late,
      error: r.error === undefined ? undefined : r.error instanceof Error ? r.error.message : String(r.error),
    });
  return createReceiver({
    secret: [...SCENARIO.secrets],
    budgetMs: SCENARIO.budgetMs,
    maxBodyBytes: SCENARIO.maxBodyBytes,
    logger: { info: log, warn: log, error: log },
  }).onAny(async (event, ctx) => {
    const behaviour = event.merchantReference;
    if (behaviour === 'slow') await sleep(SCENARIO.slowMs);
    if (behaviour === 'hold') await sleep(SCENARIO.holdMs);
    const { reference, merchantReference } = event;
    write({ kind: 'run', reference, event: event.event, merchantReference, secretIndex: ctx.secretIndex, attempt: ctx.attempt });
    if (behaviour === 'throw-once' && ctx.attempt === 1) throw new Error('planned failure on the first attempt');
    if (behaviour === 'reject') throw new NonRetriableError('planned rejection');
  });
}

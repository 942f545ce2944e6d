import { appendFileSync } from 'node:fs';
import { createReceiver, defaultDedupeKey, type DeliveryReport, type Receiver } from '@payhook/core';

/** The receiver every adapter is tested with, and the Next app runs. */
export const SCENARIO = {
  secrets: ['whsec_conformance_current', 'whsec_conformance_previous'],
  /** The platform's merchant accounts and their secrets (a receiver with `accounts`); acct_A is in a rotation. */
  accounts: { acct_A: ['whsec_platform_a', 'whsec_platform_a_old'], acct_B: ['whsec_platform_b'] } as Record<string, string[]>,
  maxBodyBytes: 4096,
  /** A signed event with this merchant reference makes a step of the pipeline throw (its dedupeKey), with this text. */
  crash: { merchantReference: 'crash-the-pipeline', message: 'internal detail: postgres://admin:hunter2@db' },
} as const;

/** One line of the log file: a handler run, or an outcome the receiver reported. */
export type LogLine =
  | {
      kind: 'run';
      reference: string;
      event: string;
      merchantReference: string;
      secretIndex: number | null;
      attempt: number;
      account?: string;
      email?: string | null;
    }
  | {
      kind: 'report';
      outcome: string;
      status: number;
      reference?: string;
      late?: boolean;
      error?: string;
      signatureHeaderSeen?: string;
      account?: string;
      reason?: string;
    }
  | { kind: 'warn'; cause: string; message: string };

/**
 * The receiver of the scenario: its handler records each run, and runs and reports are appended
 * as JSON lines to `logFile`, which the tests read. What handlers do (throw, outlast the budget,
 * overlap) is the pipeline's business and is tested in packages/core/test/running/receiver.test.ts.
 */
export function scenarioReceiver(logFile: string | undefined, signatureHeader?: string, platform = false): Receiver {
  const write = (line: LogLine) => {
    if (logFile) appendFileSync(logFile, `${JSON.stringify(line)}\n`);
  };
  // Every report, at any level (its error is logged under `err`), and the warnings that name a cause.
  const log = (level: string, fields: object, message = '') => {
    if (level === 'warn' && 'cause' in fields) return write({ kind: 'warn', cause: String(fields.cause), message });
    if (!('outcome' in fields)) return;
    const r = fields as DeliveryReport & { err?: unknown };
    write({
      kind: 'report',
      outcome: r.outcome,
      status: r.status,
      reference: r.reference,
      late: r.late,
      error: r.err === undefined ? undefined : r.err instanceof Error ? r.err.message : String(r.err),
      signatureHeaderSeen: r.signatureHeaderSeen,
      account: r.account,
      reason: r.reason,
    });
  };
  return createReceiver({
    // The platform's receiver: the account from the path's last segment, its secrets from the table.
    ...(platform
      ? { accounts: { resolve: (name: string) => (SCENARIO.accounts[name] ? { secret: SCENARIO.accounts[name] } : undefined) } }
      : { secret: [...SCENARIO.secrets] }),
    maxBodyBytes: SCENARIO.maxBodyBytes,
    signatureHeader: signatureHeader || undefined,
    logger: log,
    dedupeKey: (event) => {
      if (event.merchantReference === SCENARIO.crash.merchantReference) throw new Error(SCENARIO.crash.message);
      return defaultDedupeKey(event);
    },
  }).onAny((event, ctx) => {
    const { reference, merchantReference } = event;
    const { email } = event.customer;
    const { secretIndex, attempt, account } = ctx;
    write({ kind: 'run', reference, event: event.event, merchantReference, secretIndex, attempt, email, account });
  });
}

import type { Clock } from '../base/clock.js';
import { SERVICE_TIMEOUT_MS } from '../settings/options.js';
import type { Log, LogLevel } from '../base/logger.js';
import type { Telemetry } from '../contracts/handling.js';
import type { SignatureDiagnosis } from './diagnose.js';
import { signatureFix } from './signature-fix.js';
import { LEVEL, OUTCOMES } from '../protocol/outcomes.js';
import type { DeliveryReport, ErrorHandler } from '../contracts/delivery.js';

/** The level each outcome is logged at, from the one table (../protocol/outcomes.ts). */
export { LEVEL } from '../protocol/outcomes.js';

/**
 * An outcome that went well but carries an error (a done record that could not be written) is an
 * error; one answered after a blocked loop made the service wait past its timeout is a warning.
 */
export const levelOf = (r: DeliveryReport): LogLevel => {
  const level = LEVEL[r.outcome];
  if (level !== 'info' && level !== 'debug') return level;
  return r.error !== undefined ? 'error' : r.loopBlocked !== undefined ? 'warn' : level;
};

export interface ReporterSettings {
  log: Log;
  errorHandlers: readonly ErrorHandler[];
  /** Spans and metrics (`telemetry` option), and the platform's diagnostics channel where it has one. */
  telemetry: Telemetry | undefined;
  publish: ((report: DeliveryReport) => void) | undefined;
  clock: Clock;
  /** The signature header's name and the receiver's `mode`, for the fix of a refused signature. */
  signatureHeader: string;
  mode: string | undefined;
}

/**
 * Log a report once, at its outcome's level, record it in telemetry, publish it on the platform's
 * diagnostics channel, and hand failures to the `onError` handlers. Fields
 * come first, the message second, the error under `err`. Successes are the hot path: nothing is
 * built for a level the logger does not write, and a report without an error is passed as it is.
 */
export function createReporter(s: ReporterSettings): (r: DeliveryReport, unlogged?: boolean) => DeliveryReport {
  const { log, errorHandlers, telemetry, publish, clock } = s;
  // `unlogged`: a refusal past its minute's share of log lines; telemetry and onError still see it.
  return (r, unlogged = false) => {
    const level = levelOf(r);
    if (!unlogged && log.enabled(level)) log.write(level, fieldsOf(r), messageOf(r, s));
    if (telemetry !== undefined) {
      try {
        telemetry.record(r, clock.now());
      } catch {}
    }
    publish?.(r);
    if (r.error !== undefined) {
      for (const h of errorHandlers) {
        try {
          h(r.error, r);
        } catch (e) {
          log.write('error', { ...fieldsOf(r), err: e }, '[@payhook/core] an onError handler threw');
        }
      }
    }
    return r;
  };
}

/** The report as log fields: the error under `err`, where pino, bunyan and winston look for it. */
function fieldsOf(r: DeliveryReport): object {
  if (r.error === undefined) return r;
  const { error, ...rest } = r;
  return { ...rest, err: error };
}

function messageOf(r: DeliveryReport, s: ReporterSettings): string {
  if (r.job !== undefined) return jobMessage(r, r.job);
  if (r.late) {
    if (r.outcome === 'failed') {
      return '[@payhook/core] a handler failed after the service was answered 202, so the service will not redeliver the event: createReconciler recovers it.';
    }
    return `[@payhook/core] late outcome ${r.outcome}, after the answer was sent`;
  }
  const head = `[@payhook/core] delivery ${r.outcome} (${r.status})${r.loopBlocked ? blockedNote(r.loopBlocked) : ''}`;
  if (r.outcome === 'unauthorized' && r.reason !== undefined)
    return `${head}: ${signatureFix(r as SignatureDiagnosis, s.signatureHeader, s.mode)}`;
  if (r.outcome === 'invalid') return `${head}: ${invalidFix(r.error)}`;
  if (r.outcome === 'held')
    return `${head}: ${r.event} of ${r.reference} came before what precedes it (${r.waitingFor?.join(', ')}); the service retries it`;
  return head;
}

/** Why an answer left late: the handlers that held the event loop, named on the delivery's own line. */
const blockedNote = (b: NonNullable<DeliveryReport['loopBlocked']>) =>
  `, answered ${Math.round(b.sinceMs / 100) / 10} s after ${b.by.join(', ')} began blocking the event loop, past the service's ${SERVICE_TIMEOUT_MS / 1000} s: it may have given up and will retry. Move CPU-bound work to a worker thread, or hand the event to a queue`;

/** A queue worker's report: the job, its attempt, and what becomes of it when it went wrong. */
function jobMessage(r: DeliveryReport, job: NonNullable<DeliveryReport['job']>): string {
  const head = `[@payhook/core] job ${job.id} of queue ${job.queue}: ${r.outcome}, attempt ${job.attempt} of ${job.maxAttempts}`;
  // What the verdict (job-runner's verdictOf) does with it, from the same table.
  const verdict = OUTCOMES[r.outcome].job;
  if (verdict === 'dead-letter') return `${head}; it goes to the dead-letter queue`;
  if (verdict === 'complete') return head;
  return job.attempt >= job.maxAttempts
    ? `${head}, the last; it goes to the dead-letter queue`
    : `${head}; the queue runs it again after its backoff`;
}

/**
 * What to do about a signed event payhook cannot read. The service retries a 400 for about 15
 * minutes and then gives up, so the log says so, names the fields, and names the way back.
 */
function invalidFix(error: unknown): string {
  const issues = (error as { issues?: { path: PropertyKey[]; message: string }[] } | undefined)?.issues ?? [];
  const fields = issues.map((i) => `${i.path.map(String).join('.') || 'body'} (${i.message})`).join(', ');
  return (
    `the service signed it, but it is not the event shape payhook reads: ${fields || 'see err'}. ` +
    'The service retries it 4 more times over about 15 minutes and then marks it failed: fix the schema (update @payhook/core, or report the payload to payhook), ' +
    "and createReconciler recovers the event from the service's record."
  );
}

import type { DeliveryReport, DeliveryFields, ReceiverResult } from '../contracts/delivery.js';
import { STATUS, type DeliveryOutcome } from '../protocol/outcomes.js';

// The outcomes and their statuses live in the one table (../protocol/outcomes.ts); re-exported for the steps.
export { STATUS, type DeliveryOutcome } from '../protocol/outcomes.js';

/** A report for `outcome`, with its status from the one table. */
export function reportOf(outcome: DeliveryOutcome, fields?: DeliveryFields): DeliveryReport {
  if (fields === undefined) return { outcome, status: STATUS[outcome] };
  // Every delivery's path: the names, copied by hand (a spread costs more than the rest of this).
  if (fields.error === undefined && fields.late === undefined) {
    const { account, reference, event, dedupeKey, source, attempt, secretIndex, deliveryId } = fields;
    return { outcome, status: STATUS[outcome], account, reference, event, dedupeKey, source, attempt, secretIndex, deliveryId };
  }
  return { outcome, status: STATUS[outcome], ...fields };
}

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });
// Stop reading an oversized or endless upload rather than take it all: the connection is closed after the answer.
const CLOSE = Object.freeze({ ...JSON_HEADERS, connection: 'close' });
const HEADERS: Partial<Record<number, Readonly<Record<string, string>>>> = {
  405: Object.freeze({ ...JSON_HEADERS, allow: 'POST' }),
  408: CLOSE,
  413: CLOSE,
};
const BODIES = Object.fromEntries(Object.keys(STATUS).map((o) => [o, `{"outcome":"${o}"}`])) as Record<DeliveryOutcome, string>;

/** The HTTP answer for a report: shared, frozen headers and a precomputed body per outcome. */
export const answerOf = (report: DeliveryReport): ReceiverResult => ({
  status: report.status,
  headers: HEADERS[report.status] ?? JSON_HEADERS,
  body: BODIES[report.outcome],
  report,
});

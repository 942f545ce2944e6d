import type { Delivery, DeliveryAttempt } from './delivery-record.js';
import { MAX_ATTEMPTS } from './retry-schedule.js';

/**
 * One line of `serve`'s live log for a delivery attempt: when (service clock), event, reference,
 * attempt n/5, the answer's status or the network error, latency, and what happens next.
 * `withMerchant` (serve with several merchants) names the delivery's merchant after the time.
 *
 * @example
 * liveLogLine(delivery, attempt);
 * // '2026-08-13T10:00:00.000Z payment.success PAB12CD3420260813 dlv_1 attempt 1/5 → 200 in 12 ms, delivered'
 */
export function liveLogLine(d: Delivery, a: DeliveryAttempt, withMerchant = false): string {
  const outcome = a.status !== null ? String(a.status) : (a.error ?? 'no answer');
  let next: string;
  if (a.error === null) next = 'delivered';
  else if (d.state === 'retrying' && d.nextAttemptAt) {
    const inSeconds = Math.max(0, Math.round((Date.parse(d.nextAttemptAt) - Date.parse(a.at)) / 1000));
    next = `${a.status !== null ? `${a.error}; ` : ''}retry ${a.number + 1}/${MAX_ATTEMPTS} at ${d.nextAttemptAt} (${inSeconds} s after this attempt started)`;
  } else if (d.state === 'failed') next = `${a.status !== null ? `${a.error}; ` : ''}failed for good after ${a.number} attempts`;
  else next = a.status !== null ? (a.error ?? '') : '';
  return `${a.at}${withMerchant ? ` ${d.merchantId}` : ''} ${d.event} ${d.reference} ${d.id} attempt ${a.number}/${MAX_ATTEMPTS} → ${outcome} in ${a.durationMs} ms${next ? `, ${next}` : ''}`;
}

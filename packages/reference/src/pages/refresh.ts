import type { Delivery } from '../delivery/delivery-record.js';
import { html, type Html } from './html.js';

/** How often a page showing an attempt in flight reloads itself. */
const IN_FLIGHT_SECONDS = 1;
/** The longest a page showing a scheduled attempt waits before it looks again (the service clock may be moved by hand). */
const MAX_WAIT_SECONDS = 60;

/**
 * How many seconds until a page showing `deliveries` should reload itself to show their progress,
 * or undefined when none of them is still going: 1 s while an attempt is in flight (or due), else
 * until the next scheduled attempt, at most a minute. `held` and `dropped` deliveries wait for
 * nothing the page could see coming, so they do not keep it reloading. The pages allow no script:
 * the reload is a `<meta http-equiv="refresh">`.
 *
 * @example
 * refreshSeconds(ctx.dispatcher.list({ reference }), ctx.clock.now()); // 1 right after a Refund
 */
export function refreshSeconds(deliveries: readonly Delivery[], now: number): number | undefined {
  let seconds: number | undefined;
  for (const d of deliveries) {
    if (d.state !== 'pending' && d.state !== 'retrying') continue;
    // No next attempt scheduled: the attempt is running now.
    const wait = d.nextAttemptAt === null ? IN_FLIGHT_SECONDS : Math.ceil((Date.parse(d.nextAttemptAt) - now) / 1000);
    const clamped = Math.min(MAX_WAIT_SECONDS, Math.max(IN_FLIGHT_SECONDS, Number.isFinite(wait) ? wait : IN_FLIGHT_SECONDS));
    seconds = seconds === undefined ? clamped : Math.min(seconds, clamped);
  }
  return seconds;
}

/** The line that says the page follows its deliveries, or nothing when it does not reload. */
export function refreshNote(seconds: number | undefined): Html | string {
  if (seconds === undefined) return '';
  return html`<p class="hint" id="refreshing">Deliveries in progress: this page reloads itself (next in ${seconds} s) until they settle.</p>`;
}

import { sign } from '@payhook/core';
import { signatureHeaderName } from '@payhook/core/api';
import { attemptError } from '@payhook/reference';
import { deliverSettings, type DeliverOptions } from './deliver-options.js';
import type { DeliverResult, DeliveryAttemptReport, DeliveryRun } from './delivery-report.js';
import { seededRandom } from './seeded-random.js';
import { toBody, type EventOrBytes } from '../events/signed-request.js';
import { resolveTarget } from '../targets/resolve-target.js';
import type { DeliveryTarget } from '../targets/target.js';

// Kept importable from here, as before the split.
export type { DeliverOptions } from './deliver-options.js';
export type { DeliverResult, DeliveryAttemptReport, DeliveryRun } from './delivery-report.js';
export { seededRandom } from './seeded-random.js';

interface Pending {
  run: DeliveryRun;
  number: number;
  dueAt: number;
  seq: number;
}

/** The event name and reference a body carries, or '' for a body that is not an event. */
function describe(body: string | Uint8Array): { event: string; reference: string } {
  try {
    const parsed = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as Record<string, unknown>;
    return {
      event: typeof parsed.event === 'string' ? parsed.event : '',
      reference: typeof parsed.reference === 'string' ? parsed.reference : '',
    };
  } catch {
    return { event: '', reference: '' };
  }
}

/**
 * Deliver events to an app as the service would, with the trouble the service can cause:
 * duplicates, concurrent copies, reordering, and the retry schedule on a virtual clock (a
 * non-2xx attempt is retried at +1, +2, +4, +8 minutes, five attempts in all, without waiting).
 * Every attempt is reported with its virtual time and status. The bodies are signed with core's
 * `sign`, once per delivery, so every attempt and copy sends the same bytes.
 *
 * The target may be a URL (real HTTP), an Express app or Node listener (served on a free port
 * for the call), a Fastify instance (`inject`), a Hono app or fetch handler, or a Next route module;
 * see `DeliveryTarget`.
 *
 * @example
 * const result = await deliver(app, createEvent('payment.success'), { secret, duplicates: 5, concurrency: 5 });
 * expect(result.delivered).toBe(true);
 * await expect(receiver).toHaveProcessedExactlyOnce(result.deliveries[0].reference, 'payment.success');
 */
export async function deliver(
  target: DeliveryTarget,
  events: EventOrBytes | readonly EventOrBytes[],
  options: DeliverOptions,
): Promise<DeliverResult> {
  const { duplicates, concurrency, timeoutMs, delays, maxAttempts } = deliverSettings(options);
  const list = Array.isArray(events) ? (events as readonly EventOrBytes[]) : [events as EventOrBytes];
  if (list.length === 0) throw new TypeError('[@payhook/testing] deliver: pass at least one event (see createEvent).');

  const header = signatureHeaderName(options.signatureHeader);
  const runs: DeliveryRun[] = [];
  for (const item of list) {
    const body = toBody(item);
    const signature = sign(body, options.secret);
    const { event, reference } = describe(body);
    for (let copy = 1; copy <= duplicates; copy++) {
      runs.push({ index: 0, event, reference, copy, body, signature, signatureHeader: header, state: 'failed', attempts: [] });
    }
  }
  const reorder = options.reorder === true ? 'reverse' : options.reorder || undefined;
  if (reorder === 'reverse') runs.reverse();
  else if (reorder === 'shuffle') {
    const next = seededRandom(options.seed ?? 1);
    for (let i = runs.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [runs[i], runs[j]] = [runs[j]!, runs[i]!];
    }
  } else if (reorder !== undefined) {
    throw new TypeError(`[@payhook/testing] deliver: reorder must be 'reverse', 'shuffle', true or false; got ${String(options.reorder)}.`);
  }
  for (const [i, run] of runs.entries()) run.index = i;

  const resolved = await resolveTarget(target, { path: options.path });
  const attempts: DeliveryAttemptReport[] = [];
  let seq = 0;
  let queue: Pending[] = runs.map((run) => ({ run, number: 1, dueAt: 0, seq: seq++ }));
  let now = 0;

  async function attempt(p: Pending): Promise<void> {
    const { run } = p;
    const report: DeliveryAttemptReport = {
      delivery: run.index,
      event: run.event,
      reference: run.reference,
      copy: run.copy,
      number: p.number,
      at: p.dueAt,
      status: null,
      outcome: null,
      error: null,
      durationMs: 0,
    };
    attempts.push(report);
    run.attempts.push(report);
    const started = performance.now();
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve('timeout');
      }, timeoutMs);
    });
    try {
      const sending = resolved.send({
        method: 'POST',
        headers: { 'content-type': 'application/json', [header]: run.signature, 'user-agent': 'payhook-testing' },
        body: run.body,
        signal: controller.signal,
      });
      sending.catch(() => {});
      const response = await Promise.race([sending, timedOut]);
      if (response === 'timeout') {
        report.error = attemptError({ kind: 'timeout', ms: timeoutMs });
      } else {
        report.status = response.status;
        const text = await Promise.race([response.text(), timedOut]);
        if (text !== 'timeout') {
          try {
            const outcome = (JSON.parse(text) as { outcome?: unknown }).outcome;
            report.outcome = typeof outcome === 'string' ? outcome : null;
          } catch {
            // Not payhook's answer body; the status is what the service looks at.
          }
        }
        report.error = attemptError({ kind: 'answered', status: response.status });
      }
    } catch (error) {
      report.error = attemptError(controller.signal.aborted ? { kind: 'timeout', ms: timeoutMs } : { kind: 'connection-error', error });
    } finally {
      clearTimeout(timer);
      report.durationMs = Math.round(performance.now() - started);
    }
    if (report.error === null) run.state = 'delivered';
    else if (p.number < maxAttempts) {
      queue.push({ run, number: p.number + 1, dueAt: p.dueAt + delays[p.number - 1]!, seq: seq++ });
    }
  }

  try {
    while (queue.length > 0) {
      queue.sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
      const dueAt = queue[0]!.dueAt;
      if (dueAt > now) {
        await options.onAdvance?.(dueAt - now);
        now = dueAt;
      }
      const batch = queue.filter((p) => p.dueAt === dueAt);
      queue = queue.filter((p) => p.dueAt !== dueAt);
      let next = 0;
      const worker = async () => {
        while (next < batch.length) await attempt(batch[next++]!);
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, batch.length) }, worker));
    }
  } finally {
    await resolved.close();
  }
  return {
    attempts,
    deliveries: runs,
    statuses: attempts.map((a) => a.status),
    delivered: runs.every((r) => r.state === 'delivered'),
  };
}

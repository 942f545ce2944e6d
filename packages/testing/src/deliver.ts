import { sign, SIGNATURE_HEADER } from '@payhook/core';
import { DELIVERY_TIMEOUT_MS, MAX_ATTEMPTS, RETRY_DELAYS_MS } from '@payhook/reference';
import { toBody, type EventOrBytes } from './signed-request.js';
import { resolveTarget, type DeliveryTarget } from './target.js';

export interface DeliverOptions {
  /** The webhook secret the receiver checks against. */
  secret: string;
  /** The webhook route on an app target. Default `/webhooks`. */
  path?: string;
  /** How many times each event is sent, as separate identical deliveries (same bytes, same signature). Default 1. */
  duplicates?: number;
  /** How many deliveries are in flight at once. Default 1: one after another. */
  concurrency?: number;
  /**
   * Change the order the deliveries are first sent in (copies included): `'reverse'` (or `true`)
   * sends the newest first, as the service's `reorder` fault does; `'shuffle'` uses `seed`.
   */
  reorder?: boolean | 'reverse' | 'shuffle';
  /** Seed of `reorder: 'shuffle'`, so a failing order can be replayed. Default 1. */
  seed?: number;
  /**
   * Retry an attempt that did not get a 2xx, on a virtual clock (nothing waits for real):
   * `true` (default) is the service's schedule, attempts 2 to 5 at 1, 2, 4 and 8 minutes after
   * the start of the attempt before; a list gives other delays in ms (attempts = delays + 1);
   * `false` sends each delivery once.
   */
  retrySchedule?: boolean | readonly number[];
  /** An attempt with no answer within this many real milliseconds counts as failed (status null). Default 10000, the service's timeout. */
  timeoutMs?: number;
  /**
   * Called with the virtual milliseconds before the clock moves to the next attempts, so the
   * app's own clock can follow (`vi.advanceTimersByTimeAsync(ms)`, a store's `now`).
   */
  onAdvance?: (ms: number) => unknown;
}

/** One attempt of one delivery. */
export interface DeliveryAttemptReport {
  /** Index into `DeliverResult.deliveries`. */
  delivery: number;
  /** The event name and reference read from the body ('' when the body is not an event). */
  event: string;
  reference: string;
  /** Which copy of the event this delivery is: 1 to `duplicates`. */
  copy: number;
  /** 1 to the schedule's last attempt (5 by default). */
  number: number;
  /** Virtual milliseconds since the first attempt: 0, 60000, 180000, 420000, 900000 for the service's schedule. */
  at: number;
  /** The HTTP status, or null when no answer came (timeout, connection error). */
  status: number | null;
  /** payhook's answer body `{"outcome": …}` (processed, duplicate, in-progress, accepted…), or null for another body. */
  outcome: string | null;
  /** Why the attempt failed (non-2xx, timeout, connection error); null on a 2xx. */
  error: string | null;
  /** Real milliseconds the attempt took. */
  durationMs: number;
}

/** One delivery (one copy of one event) and all its attempts. */
export interface DeliveryRun {
  index: number;
  event: string;
  reference: string;
  copy: number;
  /** The exact bytes sent and their signature. */
  body: string | Uint8Array;
  signature: string;
  /** `delivered` once an attempt got a 2xx; `failed` when the schedule ran out. */
  state: 'delivered' | 'failed';
  attempts: DeliveryAttemptReport[];
}

export interface DeliverResult {
  /** Every attempt, in the order they were made. */
  attempts: DeliveryAttemptReport[];
  /** Every delivery, in the order each was first sent (after `reorder`). */
  deliveries: DeliveryRun[];
  /** The status of every attempt, in order (`attempts.map(a => a.status)`). */
  statuses: (number | null)[];
  /** True when every delivery got a 2xx. */
  delivered: boolean;
}

interface Pending {
  run: DeliveryRun;
  number: number;
  dueAt: number;
  seq: number;
}

/**
 * mulberry32: a small seeded generator of numbers in [0, 1), so a shuffled storm replays the same way.
 *
 * @example
 * const next = seededRandom(42);
 * const coin = next() < 0.5;
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function wholeNumber(value: unknown, name: string, min: number, max: number): number {
  if (!(typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)) {
    throw new RangeError(`[@payhook/testing] deliver: ${name} must be a whole number from ${min} to ${max}; got ${String(value)}.`);
  }
  return value;
}

function delaysOf(schedule: DeliverOptions['retrySchedule']): readonly number[] {
  if (schedule === undefined || schedule === true) return RETRY_DELAYS_MS;
  if (schedule === false) return [];
  if (Array.isArray(schedule) && schedule.every((d) => typeof d === 'number' && Number.isFinite(d) && d >= 0)) return schedule;
  throw new TypeError(
    '[@payhook/testing] deliver: retrySchedule must be true (the service\'s 1, 2, 4, 8 minutes), false (no retries) or a list of delays in ms, e.g. [60000, 120000].',
  );
}

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

function errorText(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
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
  if (!options || typeof options.secret !== 'string' || options.secret === '') {
    throw new TypeError('[@payhook/testing] deliver needs { secret }: the webhook secret your receiver was created with.');
  }
  const duplicates = wholeNumber(options.duplicates ?? 1, 'duplicates', 1, 1000);
  const concurrency = wholeNumber(options.concurrency ?? 1, 'concurrency', 1, 1000);
  const timeoutMs = wholeNumber(options.timeoutMs ?? DELIVERY_TIMEOUT_MS, 'timeoutMs', 1, 600_000);
  const delays = delaysOf(options.retrySchedule);
  const maxAttempts = options.retrySchedule === undefined || options.retrySchedule === true ? MAX_ATTEMPTS : delays.length + 1;
  const list = Array.isArray(events) ? (events as readonly EventOrBytes[]) : [events as EventOrBytes];
  if (list.length === 0) throw new TypeError('[@payhook/testing] deliver: pass at least one event (see createEvent).');

  const runs: DeliveryRun[] = [];
  for (const item of list) {
    const body = toBody(item);
    const signature = sign(body, options.secret);
    const { event, reference } = describe(body);
    for (let copy = 1; copy <= duplicates; copy++) {
      runs.push({ index: 0, event, reference, copy, body, signature, state: 'failed', attempts: [] });
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
  runs.forEach((run, i) => (run.index = i));

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
        headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: run.signature, 'user-agent': 'payhook-testing' },
        body: run.body,
        signal: controller.signal,
      });
      sending.catch(() => {});
      const response = await Promise.race([sending, timedOut]);
      if (response === 'timeout') {
        report.error = `timed out: no answer within ${timeoutMs} ms`;
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
        if (response.status < 200 || response.status > 299) {
          report.error = response.status >= 300 && response.status < 400 ? `redirect ${response.status} not followed` : `answered ${response.status}, not 2xx`;
        }
      }
    } catch (error) {
      report.error = controller.signal.aborted ? `timed out: no answer within ${timeoutMs} ms` : `connection error: ${errorText(error)}`;
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

import { createEvent, signedBody } from '@payhook/testing';
import { post } from '@payhook/test-support/children';

/** A webhook as the service recorded it: its exact bytes and their signature header. */
export interface RecordedDelivery {
  reference: string;
  body: string;
  headers: Record<string, string>;
}

/** What the service saw of one event's deliveries. */
export interface EventFate {
  reference: string;
  /** True once any copy of the event was answered 2xx: the service then stops retrying it. */
  acked: boolean;
  /** When the first 2xx came (`performance.now()`). */
  ackedAt?: number;
  /** Every answer, as `status outcome`, or `network` when the connection failed, or `timeout` past `timeoutMs`. */
  answers: string[];
  /** How long each of `answers` took, in ms, in the same order: a failed connection is an answer too. */
  answerMs: number[];
}

export interface ServiceLoad {
  /** The receivers' ports; copies of an event go to different ones. */
  ports: number[];
  secret: string;
  /** A prefix for the events' references, unique per test. */
  run: string;
  events: number;
  /** Deliveries of each event sent at once, as the service's duplicates. Default 2. */
  copies?: number;
  /** Events in flight at a time. Default 16. */
  inFlight?: number;
  /** The waits between attempts of one delivery: the service's schedule, shortened. Default 5 retries over about 6 s. */
  retryDelaysMs?: readonly number[];
  /** Called as each event's deliveries start, so a test can break a server at a chosen point. */
  onEvent?: (index: number) => void | Promise<void>;
  /** Give up on an answer after this long (`timeout`, retried like a 5xx), as the service does. Default: wait. */
  timeoutMs?: number;
  /** Deliver only these events (the service's resend of some): the fates come in this order. Default all `events`. */
  indices?: readonly number[];
  /**
   * Deliver these recorded webhooks (their exact bytes and signature headers, e.g. the reference
   * service's) instead of events made here: `events` and `secret` are then unused.
   */
  deliveries?: readonly RecordedDelivery[];
  /** Checked before each event and each retry: once true nothing more is sent (a receiver died, the test has failed), and the fates of events not started are left out. */
  halt?: () => boolean;
}

const DEFAULT_DELAYS = [250, 500, 1_000, 1_500, 3_000];

/**
 * Play the service against real receiver processes: each event is delivered `copies` times at
 * once, and each delivery is retried on anything but a 2xx (5xx, 409, a broken connection) on the
 * shortened schedule, then given up, as the service gives up after its fifth attempt. The waits
 * are real: the servers under test keep real time.
 */
export async function serviceLoad(load: ServiceLoad): Promise<EventFate[]> {
  const { ports, secret, run, events, copies = 2, inFlight = 16, retryDelaysMs = DEFAULT_DELAYS, timeoutMs } = load;
  const indices = load.indices ?? Array.from({ length: load.deliveries?.length ?? events }, (_, i) => i);
  const made = (index: number): RecordedDelivery => {
    const event = createEvent('payment.success', { reference: `${run}_${index}` });
    const body = JSON.stringify(event);
    return { reference: event.reference, body, headers: signedBody(body, { secret }).headers };
  };
  const fates: EventFate[] = [];
  let next = 0;
  const deliverOne = async (slot: number) => {
    const index = indices[slot]!;
    const { reference, body, headers } = load.deliveries?.[index] ?? made(index);
    const fate: EventFate = { reference, acked: false, answers: [], answerMs: [] };
    fates[slot] = fate;
    await load.onEvent?.(index);
    await Promise.all(
      Array.from({ length: copies }, async (_, copy) => {
        for (let attempt = 0; attempt <= retryDelaysMs.length; attempt++) {
          if (attempt > 0) await new Promise((r) => setTimeout(r, retryDelaysMs[attempt - 1]));
          if (load.halt?.()) return;
          const port = ports[(index + copy + attempt) % ports.length]!;
          const sent = performance.now();
          const answer = await post(port, body, headers, timeoutMs).then(
            (r) => `${r.status} ${r.outcome}`,
            (e: { code?: string }) => (e.code === 'TIMEOUT' ? 'timeout' : 'network'),
          );
          fate.answers.push(answer);
          fate.answerMs.push(performance.now() - sent);
          if (answer.startsWith('2')) {
            fate.ackedAt ??= performance.now();
            fate.acked = true;
            return;
          }
        }
      }),
    );
  };
  await Promise.all(
    Array.from({ length: Math.min(inFlight, indices.length) }, async () => {
      while (next < indices.length && !load.halt?.()) await deliverOne(next++);
    }),
  );
  // Without a halt every slot is filled; with one, the events never started are left out.
  return fates.filter(Boolean);
}

/** How many answers of each kind, for the test's printout and its assertions. */
export function tally(fates: readonly EventFate[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of fates) for (const a of f.answers) counts[a] = (counts[a] ?? 0) + 1;
  return counts;
}

/**
 * `first`, the fates of a load, merged with those of the service's resend of every event it left
 * unacknowledged (all its attempts fell on a fault): `resend` delivers those indices again, after
 * the fault is over, or is not called when none is left (or `halt` holds).
 */
export async function withResend(
  first: readonly EventFate[],
  resend: (indices: number[]) => Promise<EventFate[]>,
  halt: () => boolean = () => false,
): Promise<{ fates: EventFate[]; resent: number }> {
  const unacked = first.flatMap((f, i) => (f.acked ? [] : [i]));
  const again = unacked.length && !halt() ? await resend(unacked) : [];
  const fates: EventFate[] = first.map((f) => ({ ...f, answers: [...f.answers], answerMs: [...f.answerMs] }));
  unacked.forEach((index, slot) => {
    const later = again[slot];
    if (!later) return;
    fates[index]!.acked ||= later.acked;
    fates[index]!.answers.push(...later.answers);
    fates[index]!.answerMs.push(...later.answerMs);
  });
  return { fates, resent: unacked.length };
}

/** Every answer that took `limitMs` or longer, as `reference: answer after n ms`. */
export const slowAnswers = (fates: readonly EventFate[], limitMs: number): string[] =>
  fates.flatMap((f) =>
    f.answerMs.flatMap((ms, i) => (ms >= limitMs ? [`${f.reference}: ${f.answers[i]} after ${Math.round(ms)} ms`] : [])),
  );

/** The events never acknowledged, with every answer they got. */
export const unacknowledged = (fates: readonly EventFate[]): string[] =>
  fates.filter((f) => !f.acked).map((f) => `${f.reference}: ${f.answers.join(', ')}`);

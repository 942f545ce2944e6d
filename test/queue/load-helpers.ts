import { createEvent, signedBody } from '@payhook/testing';
import { post } from '@payhook/test-support/children';

/** One HTTP delivery of an event, and every answer it got (`status outcome`, or `network`). */
export interface Delivery {
  /** Index of the event in the plan's `references`. */
  event: number;
  body: string;
  headers: Record<string, string>;
  /** Which web process the first attempt goes to; each retry goes to the next one. */
  port: number;
  answers: string[];
}

export interface LoadPlan {
  references: string[];
  /** What the senders take in turn: one delivery, or a pair of copies sent at once to both web processes. */
  slots: Delivery[][];
  deliveries: Delivery[];
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * `events` distinct events plus `copies` more deliveries of them, as the service's duplicates:
 * `concurrentCopies` of the copies go out at the same instant as another delivery of the same
 * event, to the other web process; the rest are deliveries of their own, and the whole list is
 * shuffled, so that a copy may come long after its first delivery, or right next to it (then the
 * senders have both in flight at once), or before it.
 */
export function planLoad(o: {
  run: string;
  secret: string;
  events: number;
  copies: number;
  concurrentCopies: number;
  ports: number;
  random: () => number;
}): LoadPlan {
  const { random } = o;
  const signed = Array.from({ length: o.events }, (_, i) => {
    const event = createEvent('payment.success', { reference: `${o.run}_${i}` });
    const body = JSON.stringify(event);
    return { reference: event.reference, body, headers: signedBody(body, { secret: o.secret }).headers as Record<string, string> };
  });
  const deliveries: Delivery[] = [];
  const delivery = (event: number, port: number): Delivery => {
    const d = { event, body: signed[event]!.body, headers: signed[event]!.headers, port, answers: [] };
    deliveries.push(d);
    return d;
  };
  const slots: Delivery[][] = signed.map((_, i) => [delivery(i, Math.floor(random() * o.ports))]);
  // Pairs: a copy goes alongside an event's delivery, to the other web process.
  const paired = shuffle(slots.slice(), random).slice(0, o.concurrentCopies);
  for (const slot of paired) slot.push(delivery(slot[0]!.event, (slot[0]!.port + 1) % o.ports));
  for (let c = 0; c < o.copies - o.concurrentCopies; c++)
    slots.push([delivery(Math.floor(random() * o.events), Math.floor(random() * o.ports))]);
  return { references: signed.map((s) => s.reference), slots: shuffle(slots, random), deliveries };
}

/**
 * Play the service: `inFlight` senders take the slots in order; each delivery is retried on
 * anything but a 2xx (409, 5xx, a broken connection) after the next of `retryDelaysMs`, going to
 * the next web process, and given up after the last. Real HTTP on loopback, real waits.
 */
export async function send(plan: LoadPlan, ports: readonly number[], inFlight: number, retryDelaysMs: readonly number[]): Promise<void> {
  const deliver = async (d: Delivery) => {
    for (let attempt = 0; attempt <= retryDelaysMs.length; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, retryDelaysMs[attempt - 1]));
      const port = ports[(d.port + attempt) % ports.length]!;
      const answer = await post(port, d.body, d.headers).then(
        (r) => `${r.status} ${r.outcome}`,
        () => 'network',
      );
      d.answers.push(answer);
      if (answer.startsWith('2')) return;
    }
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < plan.slots.length) await Promise.all(plan.slots[next++]!.map(deliver));
    }),
  );
}

/** How many answers of each kind, over every attempt of every delivery. */
export function tallyAnswers(deliveries: readonly Delivery[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const d of deliveries) for (const a of d.answers) counts[a] = (counts[a] ?? 0) + 1;
  return counts;
}

/**
 * What went wrong with the answers, one line per problem (empty when none): every delivery ends
 * 2xx, an attempt before its last may only be 409 in-progress, and of each event's deliveries
 * exactly one ends `200 queued` and the rest `200 duplicate`.
 */
export function answerProblems(plan: LoadPlan): string[] {
  const problems: string[] = [];
  const queued = new Array<number>(plan.references.length).fill(0);
  for (const d of plan.deliveries) {
    const last = d.answers.at(-1);
    const ref = plan.references[d.event];
    if (last === '200 queued') queued[d.event]! += 1;
    else if (last !== '200 duplicate') problems.push(`${ref}: a delivery ended ${last} (answers ${d.answers.join(', ')})`);
    if (d.answers.slice(0, -1).some((a) => a !== '409 in-progress')) problems.push(`${ref}: answers ${d.answers.join(', ')}`);
  }
  for (const [i, n] of queued.entries()) if (n !== 1) problems.push(`${plan.references[i]}: queued ${n} times`);
  return problems;
}

/** The children's error lines, grouped: ids, keys and numbers blanked, each kind with its count. */
export function errorKinds(lines: readonly string[]): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const line of lines) {
    if (!line.trim()) continue;
    const kind = line
      .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>')
      .replace(/sandbox:\S+/g, '<key>')
      .replace(/"[^"]*"/g, '"<key>"')
      .replace(/\d+/g, 'n')
      .slice(0, 400);
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

/**
 * Load: deliveries from the reference dispatcher to an example on the Postgres store, with
 * duplicates and reordering, checked for "every (reference, event) handled exactly once".
 * bench/load.ts runs it at full size and writes BENCHMARKS.md's "## Load"; test/security/load.test.ts
 * runs it at CI size.
 */
import { seededRandom } from '@payhook/testing';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createReferenceService } from '@payhook/reference';
import { freePort, startExample, type ExampleName } from './apps/examples.js';

const MINUTE = 60_000;
const API_KEY = 'sk_test_load_bench_key_0001';
const SECRET = 'whsec_load_bench_secret';
const ACTIONS = ['pay', 'refund', 'complete-refund'] as const;
const EVENTS = ['payment.success', 'payment.refunding', 'payment.refunded'] as const;

export interface LoadOptions {
  example: ExampleName;
  /** Deliveries sent in all, duplicates included. */
  deliveries: number;
  /** Share of the deliveries that are extra copies (duplicate fault). Default 0.3. */
  duplicateShare?: number;
  /** Share of transactions whose events are held and sent newest first (reorder fault). Default 0.25. */
  reorderShare?: number;
  /** Postgres to use; a fresh schema is made in it and dropped afterwards. */
  databaseUrl: string;
  /** Seed of the random plan. */
  seed?: number;
  /** Sandbox actions between two settles of the in-flight deliveries. Default 50. */
  settleEvery?: number;
}

export interface LoadResult {
  example: ExampleName;
  deliveries: number;
  uniqueEvents: number;
  duplicateCopies: number;
  reorderedTransactions: number;
  transactions: number;
  durationMs: number;
  deliveriesPerSecond: number;
  attempts: number;
  /** Attempts answered 409: a duplicate arrived while the first copy was still being handled (retried 1 min later). */
  inProgress409: number;
  fivexx: number;
  /** Attempts with no answer (timeout, connection error). */
  noAnswer: number;
  /** Deliveries answered 2xx whose event had already run: duplicates the receiver absorbed. */
  duplicatesSeen: number;
  delivered: number;
  notDelivered: number;
  /** (reference, event) pairs whose handler ran other than exactly once, per GET /orders. */
  wrongCounts: { merchantReference: string; events: string[] }[];
  /** Done records in the store's table. */
  doneRecords: number;
  /** The deliveries that had an attempt with no answer: `merchantReference event error`. */
  unanswered: string[];
  /** Attempts by status (`none` for no answer). */
  statuses: Record<string, number>;
  /** Why attempts failed, counted (status or error text). */
  failures: Record<string, number>;
  /** The example's own output, last lines, for a failure report. */
  exampleOutput: string;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const rand = seededRandom(options.seed ?? 20261122);
  const duplicateCopies = Math.round(options.deliveries * (options.duplicateShare ?? 0.3));
  const uniqueEvents = options.deliveries - duplicateCopies;
  const transactions = Math.ceil(uniqueEvents / 3);

  // A fresh schema: the example's table (payhook_example_deliveries) is created in it through search_path.
  const schema = `payhook_load_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: options.databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const url = new URL(options.databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);

  const port = await freePort();
  const service = createReferenceService({
    clock: 'manual',
    allowHttpCallbacks: true,
    rateLimit: { limit: 1_000_000 },
    onError: (e) => console.error('[load] reference error', e),
    merchants: [{ id: 'load', apiKeys: [{ key: API_KEY }], webhookSecret: SECRET, callbackUrl: `http://127.0.0.1:${port}/webhooks` }],
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await service.fetch(
      new Request(`http://127.0.0.1${path}`, {
        method,
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    // Successes are bare bodies (204 has none); failures the error envelope.
    const json = (res.status === 204 ? null : await res.json()) as Record<string, unknown> | null;
    if (res.status >= 300) throw new Error(`[load] ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const running = await service.listen({ port: 0, host: '127.0.0.1' });
  const app = await startExample(
    options.example,
    {
      PORT: String(port),
      PAYHOOK_BASE_URL: running.url,
      PAYHOOK_API_KEY: API_KEY,
      PAYHOOK_WEBHOOK_SECRET: SECRET,
      DATABASE_URL: url.toString(),
    },
    300_000,
  );
  try {
    // The plan: transactions with 1 to 3 events, duplicates spread at random, some reordered.
    const plan: { reference: string; merchantReference: string; events: number }[] = [];
    let left = uniqueEvents;
    for (let i = 0; i < transactions; i++) {
      // Three events each, fewer for the last ones so the total is exactly `uniqueEvents`.
      const events = Math.max(1, Math.min(3, left - (transactions - i - 1)));
      left -= events;
      const merchantReference = `load-${options.example}-${i}`;
      const { reference } = (await call('POST', '/v1/transactions/initialize', {
        amount: '100.00',
        currencyCode: 'ETB',
        customerPhone: '0911234567',
        merchantReference,
      })) as { reference: string };
      plan.push({ reference, merchantReference, events });
    }
    const copies = new Map<string, number>();
    for (let d = 0; d < duplicateCopies; ) {
      const tx = plan[Math.floor(rand() * plan.length)]!;
      const key = `${tx.reference} ${EVENTS[Math.floor(rand() * tx.events)]}`;
      if ((copies.get(key) ?? 0) >= 3) continue;
      copies.set(key, (copies.get(key) ?? 0) + 1);
      d++;
    }
    for (const [key, times] of copies) {
      const [reference, event] = key.split(' ');
      await call('POST', '/_sandbox/faults', { type: 'duplicate', reference, event, times });
    }
    let reorderedTransactions = 0;
    for (const tx of plan) {
      if (tx.events > 1 && rand() < (options.reorderShare ?? 0.25)) {
        await call('POST', '/_sandbox/faults', { type: 'reorder', reference: tx.reference, count: tx.events });
        reorderedTransactions++;
      }
    }

    // The actions, interleaved at random across transactions (each transaction's own in order).
    const queue = plan.map((tx) => ({ tx, next: 0 }));
    const started = performance.now();
    let sinceSettle = 0;
    while (queue.length > 0) {
      const i = Math.floor(rand() * queue.length);
      const item = queue[i]!;
      await call('POST', `/_sandbox/transactions/${item.tx.reference}/${ACTIONS[item.next]}`);
      item.next++;
      if (item.next >= item.tx.events) queue.splice(i, 1);
      // Let a batch of deliveries go out and be answered before the next.
      if (++sinceSettle >= (options.settleEvery ?? 50)) {
        sinceSettle = 0;
        await service.clock.advance(0);
      }
    }
    await service.clock.advance(0);
    // Whatever was answered 409 or 503 (a copy met its first in flight, or the store was slow) is
    // retried on the schedule. The real schedule is minutes apart; a little real time between
    // virtual minutes lets a claim that landed late be given back before the next attempt.
    for (let i = 0; i < 20 && service.deliveries().some((d) => d.state !== 'delivered'); i++) {
      await new Promise((r) => setTimeout(r, 500));
      await service.clock.advance(MINUTE);
    }
    const durationMs = performance.now() - started;

    const deliveries = service.deliveries();
    const attempts = deliveries.flatMap((d) => d.attempts);
    const checkOrders = async () => {
      const wrong: LoadResult['wrongCounts'] = [];
      for (const tx of plan) {
        const order = (await (await fetch(`${app.url}/orders/${tx.merchantReference}`)).json()) as { events?: string[] };
        const got = [...(order.events ?? [])].sort();
        const want = EVENTS.slice(0, tx.events).slice().sort();
        if (JSON.stringify(got) !== JSON.stringify(want))
          wrong.push({ merchantReference: tx.merchantReference, events: order.events ?? [] });
      }
      return wrong;
    };
    // A handler past the receiver's budget (202) finishes a little later; a handler run twice never un-runs.
    let wrongCounts = await checkOrders();
    for (const until = Date.now() + 15_000; wrongCounts.some((w) => w.events.length < EVENTS.length) && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 500));
      wrongCounts = await checkOrders();
    }
    // A handler past the receiver's budget (202) finishes and writes its done record a little later.
    const countDone = async () =>
      Number((await admin.query(`SELECT count(*)::int AS n FROM "${schema}".payhook_example_deliveries WHERE state = 'done'`)).rows[0].n);
    let doneRecords = await countDone();
    for (const until = Date.now() + 15_000; doneRecords < uniqueEvents && Date.now() < until; doneRecords = await countDone()) {
      await new Promise((r) => setTimeout(r, 250));
    }
    const delivered = deliveries.filter((d) => d.state === 'delivered').length;
    return {
      example: options.example,
      deliveries: deliveries.length,
      uniqueEvents,
      duplicateCopies,
      reorderedTransactions,
      transactions,
      durationMs,
      deliveriesPerSecond: deliveries.length / (durationMs / 1000),
      attempts: attempts.length,
      inProgress409: attempts.filter((a) => a.status === 409).length,
      fivexx: attempts.filter((a) => (a.status ?? 0) >= 500).length,
      noAnswer: attempts.filter((a) => a.status === null).length,
      duplicatesSeen: delivered - (uniqueEvents - wrongCounts.length),
      delivered,
      notDelivered: deliveries.length - delivered,
      wrongCounts,
      doneRecords,
      unanswered: deliveries.flatMap((d) =>
        d.attempts
          .filter((a) => a.status === null)
          .map(
            (a) =>
              `${plan.find((t) => t.reference === d.reference)?.merchantReference} ${d.event} #${a.number} ${d.duplicateOf ? 'copy' : 'first'} ${a.error}`,
          ),
      ),
      statuses: attempts.reduce<Record<string, number>>((acc, a) => {
        acc[String(a.status ?? 'none')] = (acc[String(a.status ?? 'none')] ?? 0) + 1;
        return acc;
      }, {}),
      failures: attempts.reduce<Record<string, number>>((acc, a) => {
        if (a.error !== null) {
          const why = a.error.replace(/\d+/g, 'N');
          acc[why] = (acc[why] ?? 0) + 1;
        }
        return acc;
      }, {}),
      // The example's error reports (its 409 warnings are expected and left out), for a failure report.
      exampleOutput: app
        .output()
        .split(/\n(?=\[)/)
        .filter((entry) => /error/i.test(entry) && !entry.includes("outcome: 'in-progress'"))
        .slice(-30)
        .join('\n'),
    };
  } finally {
    await app.stop();
    await running.close();
    service.close();
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => {});
    await admin.end();
  }
}

/** One row of the BENCHMARKS.md table. */
export const row = (r: LoadResult) =>
  `| ${r.example} | ${r.deliveries.toLocaleString('en')} | ${r.uniqueEvents.toLocaleString('en')} | ${r.duplicateCopies.toLocaleString('en')} | ${r.reorderedTransactions} | ${(r.durationMs / 1000).toFixed(1)} | ${Math.round(r.deliveriesPerSecond).toLocaleString('en')} | ${r.duplicatesSeen.toLocaleString('en')} | ${r.inProgress409} | ${r.fivexx} | ${r.noAnswer} | ${r.wrongCounts.length === 0 && r.doneRecords === r.uniqueEvents ? 'yes' : 'NO'} |`;

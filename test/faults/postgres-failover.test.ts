import { randomUUID } from 'node:crypto';
import { createClient } from '@payhook/client';
import { createReceiver, createReconciler } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';
import { startReferenceService, type TestReferenceService } from '@payhook/testing';
import { describe, expect, it } from 'vitest';
import { startReceiver, type ChildReceiver } from '@payhook/test-support/children';
import { countPg, effectsTable } from '@payhook/test-support/effects';
import { requirePostgres } from '@payhook/test-support/services';
import { standbyBinaries, startPostgresReplicated, type FailoverTimings } from '@payhook/test-support/servers/postgres-standby';
import { serviceLoad, tally, unacknowledged, type EventFate, type RecordedDelivery } from './service.js';
import { sleep } from '@payhook/test-support/wait';

/**
 * "Exactly once across a replica failover": PostgreSQL fails over to a real standby (streamed
 * through a link `LAG_MS` behind) while two receiver processes take deliveries with duplicates.
 * The primary is killed -9, the standby promoted, and the receivers' address moved to it (a
 * managed service's DNS flip). A synchronous standby loses nothing acknowledged; an asynchronous
 * one loses the commits still on the link, which the store must warn about at start-up and which
 * the reconciler recovers, each once.
 */
const SECRET = 'whsec_pg_failover';
const EVENTS = 240;
/** The primary is killed as this event's deliveries start; later events wait until it is gone. */
const FAIL_AT = 120;
/** The asynchronous standby's link: what it has not received when the primary dies is lost. */
const LAG_MS = 250;
/**
 * The synchronous standby's link too: every commit waits a round trip on it. The receivers run the
 * documented setting beside a synchronous standby, `listen: false`: NOTIFY's one lock, held from a
 * commit's start until the standby's answer, would make every ending commit take its turn.
 */
const SYNC_LAG_MS = LAG_MS;
const LOG = '[faults:postgres-failover]';
const INSERT = 'insert into payhook_test_effects (run, key, attempt, pid) values ($1, $2, $3, $4)';

const shared = await requirePostgres();
const bin = standbyBinaries();

type Effect = 'pg-insert' | 'pg-transactional';
type Load = (ports: number[], onEvent?: (index: number) => void | Promise<void>) => Promise<EventFate[]>;

interface Failed {
  /** The promoted standby, straight. */
  promotedUrl: string;
  ports: number[];
  /** The fates of the load the failover came into (its retries included). */
  first: EventFate[];
  timings: FailoverTimings;
  /**
   * Events answered 2xx before the receivers could reach the promoted standby whose effect is not
   * there right after its promotion. (Not the done record of a plain handler: when the primary dies
   * after the handler ran, core answers 200 and writes the done record later, on the new primary.)
   */
  lost: string[];
  stderr(): string;
  alive(): boolean[];
}

/** Runs of the effect per reference on `url`. */
const countOn = async (url: string, run: string) => {
  const pool = await effectsTable(url);
  return countPg(pool, run).finally(() => pool.end());
};
const twice = (effects: Map<string, number>) => [...effects].filter(([, n]) => n > 1).map(([key, n]) => `${key} ×${n}`);

/** A replicated cluster and two receivers; `load` runs with the failover at FAIL_AT, then `after` while the receivers still run. */
async function withFailover<T>(
  setup: { synchronous: boolean; lagMs: number; effect: Effect; secret: string; run: string; load: Load },
  after: (failed: Failed) => Promise<T>,
): Promise<T> {
  const { synchronous, lagMs, effect, secret, run, load } = setup;
  const db = (await startPostgresReplicated({ lagMs, synchronous }))!;
  const children: ChildReceiver[] = [];
  try {
    // A plain handler's effects go to the shared database, which the failover leaves alone.
    if (effect === 'pg-insert') await (await effectsTable(shared!)).end();
    const env = {
      CHILD_STORE: 'postgres',
      CHILD_URL: db.url,
      CHILD_SECRET: secret,
      CHILD_RUN: run,
      CHILD_EFFECT: effect,
      // The documented setting beside a synchronous standby; and the ledger on, its writes in the same load.
      ...(synchronous && { CHILD_PG_LISTEN: '0', CHILD_LEDGER: '1' }),
      ...(effect === 'pg-insert' && { CHILD_EFFECT_URL: shared! }),
      // Longer than the switch: a claim the old primary handed out is not taken over while its holder may still run.
      CHILD_LEASE_MS: '10000',
      CHILD_BUDGET_MS: '8000',
    };
    children.push(...(await Promise.all([startReceiver(env), startReceiver(env)])));
    const ports = children.map((c) => c.port);
    let failover: Promise<FailoverTimings> | undefined;
    let kept = new Set<string>();
    let killed!: () => void;
    const down = new Promise<void>((resolve) => (killed = resolve));
    // What the switch kept: the effects on the promoted standby (transactional), or on the shared database (plain).
    const onPromoted = async () => {
      kept = new Set((await countOn(effect === 'pg-insert' ? shared! : db.standbyUrl, run)).keys());
    };
    const first = await load(ports, (i) => {
      if (i === FAIL_AT) failover = db.failover({ onKilled: killed, onPromoted });
      return i >= FAIL_AT ? down : undefined;
    });
    const timings = await failover!;
    const switchedAt = timings.at + timings.switched;
    const lost = first.filter((f) => f.acked && f.ackedAt! < switchedAt && !kept.has(f.reference)).map((f) => f.reference);
    const stderr = () => children.map((c) => c.stderr()).join('\n');
    const alive = () => children.map((c) => c.process.exitCode === null && c.process.signalCode === null);
    return await after({ promotedUrl: db.standbyUrl, ports, first, timings, lost, stderr, alive });
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await db.stop();
  }
}

const steps = (t: FailoverTimings) => `killed ${t.killed} ms, promoted ${t.promoted} ms, switched ${t.switched} ms`;
const lineOf = (stderr: string, pattern: RegExp) => stderr.split('\n').find((line) => pattern.test(line));

/** The store's error on finding itself on a different primary, and the reconcile window it names . */
function switchWindow(stderr: string): { from: string; to: string } | undefined {
  const line = lineOf(stderr, /different primary/);
  expect(line, 'a receiver logs the switch to a different primary').toBeDefined();
  const named = /payhook reconcile --since (\S+) --until (\S+)/.exec(line ?? '');
  expect(named?.[0], 'the switch error names the reconcile to run').toMatch(/payhook reconcile --since/);
  return named ? { from: named[1]!, to: named[2]! } : undefined;
}

/** `n` sandbox payments on the reference service, whose webhooks it records but drops: the test delivers their exact bytes. */
async function paidTransactions(ref: TestReferenceService, n: number): Promise<RecordedDelivery[]> {
  await ref.addFault({ type: 'drop', count: n });
  for (let i = 0; i < n; i += 20) {
    const batch = Array.from({ length: Math.min(20, n - i) }, async () => {
      const { reference } = await ref.createTransaction();
      await ref.pay(reference, { settle: false });
    });
    await Promise.all(batch);
  }
  return ref.deliveries().map((d) => ({
    reference: d.reference,
    body: d.body,
    headers: { 'content-type': 'application/json', [d.signatureHeader ?? 'x-service-signature']: d.signature },
  }));
}

/** The reconciler on the promoted database, with the children's transactional effect; runs again while claims are still leased. */
async function reconcile(ref: TestReferenceService, url: string, run: string, range: { from: string | Date; to: string | Date }) {
  const store = postgresStore({ connectionString: url });
  const effect = store.transactional(async (event, ctx, client) => {
    await client.query(INSERT, [run, event.reference, ctx.attempt, process.pid]);
  });
  const logger = { info() {}, warn() {}, error() {} };
  const receiver = createReceiver({ secret: ref.webhookSecret, store, leaseMs: 10_000, logger }).onAny(effect);
  const client = createClient({ apiKey: ref.apiKey, baseUrl: ref.url, priority: 'background' });
  const reconciler = createReconciler({ client, receiver });
  const totals = { runs: 0, recovered: 0, inProgress: 0, failed: 0 };
  try {
    // Claims the old primary granted hold until their lease ends, on the database's clock: ask again each second.
    for (; totals.runs < 15; await sleep(1_000)) {
      const { recovered, inProgress, failed } = await reconciler.run(range);
      Object.assign(totals, { runs: totals.runs + 1, recovered: totals.recovered + recovered.length });
      Object.assign(totals, { inProgress: inProgress.length, failed: failed.length });
      if (totals.inProgress + totals.failed === 0) break;
    }
    return totals;
  } finally {
    await store.close();
  }
}

describe.skipIf(!shared || !bin)('PostgreSQL fails over to a standby under load', () => {
  it.each(['pg-insert', 'pg-transactional'] as const)(
    `synchronous standby ${SYNC_LAG_MS} ms behind, %s: nothing acknowledged is lost, nothing runs twice`,
    async (effect) => {
      const started = performance.now();
      const run = randomUUID();
      const load: Load = (ports, onEvent) => serviceLoad({ ports, secret: SECRET, run, events: EVENTS, copies: 2, inFlight: 32, onEvent });
      await withFailover({ synchronous: true, lagMs: SYNC_LAG_MS, effect, secret: SECRET, run, load }, async (f) => {
        // The service's resend of every event, once the switch is over.
        const again = await load(f.ports);
        const effects = await countOn(effect === 'pg-insert' ? shared! : f.promotedUrl, run);
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        console.info(
          `${LOG} synchronous, ${effect}: ${EVENTS} events in ${seconds} s, ${twice(effects).length} ran twice, ${f.lost.length} acknowledged then lost; ${steps(f.timings)}`,
          tally(f.first),
          tally(again),
        );
        expect(f.alive(), f.stderr().slice(-3_000)).toEqual([true, true]);
        expect(twice(effects)).toEqual([]);
        expect(f.lost).toEqual([]);
        expect(unacknowledged(again)).toEqual([]);
        for (const fate of [...f.first, ...again].filter((x) => x.acked)) expect(effects.get(fate.reference), fate.reference).toBe(1);
        // The failover was felt.
        expect(f.first.some((x) => x.answers.some((a) => a.startsWith('5') || a === 'network'))).toBe(true);
        expect(lineOf(f.stderr(), /^WARN .*(asynchronous standby|NOTIFY)/)).toBeUndefined();
        switchWindow(f.stderr());
      });
    },
    60_000,
  );

  it(`asynchronous standby ${LAG_MS} ms behind, transactional: the start-up warns, and the reconciler recovers what the switch lost, each once`, async () => {
    const started = performance.now();
    const run = randomUUID();
    const ref = await startReferenceService({ service: { rateLimit: { limit: 1_000_000 } } });
    try {
      const deliveries = await paidTransactions(ref, EVENTS);
      expect(deliveries).toHaveLength(EVENTS);
      const load: Load = (ports, onEvent) =>
        serviceLoad({ deliveries, ports, secret: '', run, events: 0, copies: 2, inFlight: 32, onEvent });
      const setup = { synchronous: false, lagMs: LAG_MS, effect: 'pg-transactional' as const, secret: ref.webhookSecret, run, load };
      await withFailover(setup, async (f) => {
        const before = await countOn(f.promotedUrl, run);
        const lostNow = f.lost.filter((r) => !before.has(r));
        const missing = deliveries.filter((d) => !before.has(d.reference)).length;
        // No resend: the reconciler walks the service's list over the window the switch error names (else the
        // hour before: the reference's clock stands still) and runs what has no done record on the promoted database.
        const hour = { from: new Date(ref.clock.now() - 3_600_000), to: new Date(ref.clock.now() + 60_000) };
        const range = switchWindow(f.stderr()) ?? hour;
        const recovery = await reconcile(ref, f.promotedUrl, run, range);
        const effects = await countOn(f.promotedUrl, run);
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        console.info(
          `${LOG} asynchronous, pg-transactional: ${EVENTS} events in ${seconds} s, ${f.lost.length} acknowledged then lost ` +
            `(${lostNow.length} still missing after the load's retries), ${recovery.recovered} recovered by reconcile in ${recovery.runs} run(s), ` +
            `${twice(effects).length} ran twice; ${steps(f.timings)}`,
          tally(f.first),
        );
        expect(f.alive(), f.stderr().slice(-3_000)).toEqual([true, true]);
        // The switch lost acknowledged commits, or the reconcile below would prove nothing.
        expect(f.lost.length).toBeGreaterThan(0);
        expect(twice(before)).toEqual([]);
        expect(recovery).toMatchObject({ inProgress: 0, failed: 0, recovered: missing });
        expect(f.lost.map((r) => `${r} ×${effects.get(r) ?? 0}`)).toEqual(f.lost.map((r) => `${r} ×1`));
        expect(twice(effects)).toEqual([]);
        expect(deliveries.filter((d) => effects.get(d.reference) !== 1).map((d) => d.reference)).toEqual([]);
        const warning = lineOf(f.stderr(), /^WARN .*asynchronous standby/);
        expect(warning, 'the start-up warning about asynchronous standbys').toBeDefined();
        expect(warning ?? '', 'and it names the setting').toMatch(/synchronous_standby_names/);
      });
    } finally {
      await ref.close();
    }
  }, 60_000);
});

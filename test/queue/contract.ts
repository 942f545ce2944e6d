// The queue contract: what a receiver handing off to a queue and a worker on it promise, asked of
// each engine the same way. It imports only payhook's published entries, vitest and the tests'
// support module (wait.ts, which the release check copies beside it). So the same file runs in
// the workspace (conformance.test.ts, both projects of the peer matrix) and, copied into a
// project of its own, against the packed tarballs on Node 24 (test/release/pg-boss-peers.test.ts).
import { createClient } from '@payhook/client';
import { createReceiver, createReconciler, NonRetriableError, type HandlerContext, type Receiver } from '@payhook/core';
import { queuedKey, type Handoff, type QueueWorker } from '@payhook/core/queue';
import { createReferenceService } from '@payhook/reference';
import { postgresStore, type PostgresStore } from '@payhook/store-postgres';
import { createEvent, signedRequest } from '@payhook/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '@payhook/test-support/wait';

/** What the contract needs of an engine: the same questions asked of BullMQ and pg-boss. */
export interface TestQueue extends Handoff {
  /** Jobs the engine holds for an event's dedupe key, in any state. */
  jobsFor(dedupeKey: string): Promise<number>;
  /** The dead-letter queue's jobs: the event's dedupe key and the error that sent it there. */
  deadLetters(): Promise<{ dedupeKey: string; error: string | undefined }[]>;
  /** The data of the job the engine holds for a dedupe key, as a worker reads it; undefined when there is none. */
  jobData(dedupeKey: string): Promise<unknown>;
  /** Write a job straight into the queue, past every receiver: what anyone who can write to the queue can do. */
  send(data: { dedupeKey: string } & Record<string, unknown>): Promise<void>;
  worker(options: { store: PostgresStore; concurrency?: number; leaseMs?: number }): QueueWorker;
  close(): Promise<void>;
}

export interface QueueSettings {
  store: PostgresStore;
  name: string;
  attempts?: number;
  backoffMs?: number;
}

export interface ContractEngine {
  /** A fresh queue on the engine. */
  queue(s: QueueSettings): TestQueue;
  /** After the suite, once every queue is closed: remove what the engine kept for it. */
  dispose?(store: PostgresStore): Promise<void>;
}

const SECRET = 'whsec_queue_contract_secret';
const SANDBOX_KEY = 'sk_test_queue_contract_0001';
const quiet = { info() {}, warn() {}, error() {} };
const keyOf = (reference: string, event = 'payment.success') => `sandbox:${reference}:${event}`;

export function queueContract(engineName: string, engine: ContractEngine, o: { databaseUrl: string; skip?: boolean }): void {
  describe.skipIf(Boolean(o.skip))(`the queue contract on ${engineName}`, () => {
    let store: PostgresStore;
    let run = 0;
    const tag = engineName.replace(/[^a-z0-9]/g, '');
    const open: { close(): Promise<void> }[] = [];
    beforeAll(() => {
      store = postgresStore({ connectionString: o.databaseUrl, table: `qconf_${tag}_${Date.now()}` });
    });
    afterEach(async () => {
      for (const x of open.splice(0).reverse()) await x.close();
    });
    afterAll(async () => {
      await engine.dispose?.(store);
      await store.close();
    });

    /** A fresh queue, a receiver handing off to it, and a worker on it (not started). */
    function setup(options: { attempts?: number; backoffMs?: number; handoff?: (q: TestQueue) => Handoff; leaseMs?: number } = {}) {
      run += 1;
      const queue = engine.queue({
        store,
        name: `qconf-${tag}-${Date.now()}-${run}`,
        attempts: options.attempts ?? 3,
        backoffMs: options.backoffMs ?? 100,
      });
      const receiver = createReceiver({
        secret: SECRET,
        store,
        handoff: options.handoff?.(queue) ?? queue,
        logger: quiet,
        // No case here is about the budget: room for an enqueue on a loaded machine (pg-boss 10.1's
        // first send answered 503 deferred past 1 s under a full CI run), inside the lease.
        budgetMs: Math.min(5_000, (options.leaseMs ?? 30_000) - 500),
        leaseMs: options.leaseMs ?? 30_000,
      });
      const worker = queue.worker({ store, concurrency: 2, leaseMs: 2_000 });
      open.push(queue, worker);
      return { queue, receiver, worker };
    }
    const deliver = async (receiver: Receiver, reference: string, event = 'payment.success') => {
      const response = await receiver.handle(signedRequest(createEvent(event as 'payment.success', { reference }), { secret: SECRET }));
      return `${response.status} ${((await response.json()) as { outcome: string }).outcome}`;
    };
    const reference = () => `Pq${tag}${Date.now()}${run}`;

    it("answers 200 queued once the job is on the queue; the worker runs the handler with the receiver's ctx and the job's", async () => {
      const { queue, receiver, worker } = setup();
      const ref = reference();
      const seen: HandlerContext[] = [];
      worker.on('payment.success', (_event, ctx) => void seen.push(ctx));
      expect(await deliver(receiver, ref)).toBe('200 queued');
      expect(await queue.jobsFor(keyOf(ref))).toBe(1);
      await worker.start();
      await until(() => seen.length === 1, { timeoutMs: 20_000, intervalMs: 50, what: 'the handler' });
      expect(seen[0]).toMatchObject({
        reference: ref,
        dedupeKey: keyOf(ref),
        source: 'webhook',
        secretIndex: 0,
        attempt: 1,
        redelivery: false,
      });
      expect(seen[0]!.job).toMatchObject({ attempt: 1, maxAttempts: 3 });
      await until(async () => (await store.get(keyOf(ref)))?.state === 'done', {
        timeoutMs: 20_000,
        intervalMs: 50,
        what: 'the done record',
      });
      expect(await store.get(queuedKey(keyOf(ref)))).toMatchObject({ state: 'done' });
    });

    it('answers a copy after the enqueue 200 duplicate and queues nothing; concurrent copies queue one job', async () => {
      const { queue, receiver } = setup();
      const ref = reference();
      expect(await deliver(receiver, ref)).toBe('200 queued');
      expect(await deliver(receiver, ref)).toBe('200 duplicate');
      const ref2 = `${ref}b`;
      const answers = await Promise.all(Array.from({ length: 8 }, () => deliver(receiver, ref2)));
      expect(answers.filter((a) => a === '200 queued')).toHaveLength(1);
      expect(answers.every((a) => ['200 queued', '200 duplicate', '409 in-progress'].includes(a))).toBe(true);
      expect(await queue.jobsFor(keyOf(ref))).toBe(1);
      expect(await queue.jobsFor(keyOf(ref2))).toBe(1);
    });

    it('retries a handler that throws, with backoff, counting ctx.job.attempt; the effect commits once with the done record', async () => {
      const { receiver, worker } = setup({ attempts: 4 });
      const ref = reference();
      const attempts: { attempt: number; at: number }[] = [];
      await store.pool.query('create table if not exists payhook_test_queue_effects (key text not null)');
      worker.on(
        'payment.success',
        store.transactional(async (event, ctx, client) => {
          attempts.push({ attempt: ctx.job!.attempt, at: Date.now() });
          await client.query('insert into payhook_test_queue_effects (key) values ($1)', [event.reference]);
          if (ctx.job!.attempt < 3) throw new Error('not yet');
        }),
      );
      await worker.start();
      expect(await deliver(receiver, ref)).toBe('200 queued');
      await until(async () => (await store.get(keyOf(ref)))?.state === 'done', {
        timeoutMs: 20_000,
        intervalMs: 50,
        what: 'the third attempt to commit',
      });
      expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
      // The engine waited between attempts (its backoff), and the rolled-back runs left nothing.
      expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(attempts[1]!.at - attempts[0]!.at - 50);
      const { rows } = await store.pool.query('select count(*)::int as n from payhook_test_queue_effects where key = $1', [ref]);
      expect(rows[0].n).toBe(1);
    });

    it('moves a job to the dead-letter queue at once on NonRetriableError, and after the last attempt otherwise', async () => {
      const { queue, receiver, worker } = setup({ attempts: 2 });
      const [never, broken] = [reference(), `${reference()}x`];
      const runs: Record<string, number> = {};
      worker.on('payment.success', (event) => {
        runs[event.reference] = (runs[event.reference] ?? 0) + 1;
        if (event.reference === never) throw new NonRetriableError('order unknown');
        throw new Error('database down');
      });
      await worker.start();
      expect(await deliver(receiver, never)).toBe('200 queued');
      expect(await deliver(receiver, broken)).toBe('200 queued');
      await until(async () => (await queue.deadLetters()).length === 2, { timeoutMs: 30_000, intervalMs: 50, what: 'both dead letters' });
      const dead = await queue.deadLetters();
      expect(dead.find((d) => d.dedupeKey === keyOf(never))?.error).toContain('order unknown');
      expect(dead.find((d) => d.dedupeKey === keyOf(broken))?.error).toContain('database down');
      expect(runs).toEqual({ [never]: 1, [broken]: 2 });
      // NonRetriableError is done (failed) and never runs again; the other is released for a replay.
      expect(await store.get(keyOf(never))).toMatchObject({ state: 'done', outcome: 'rejected' });
      expect((await store.get(keyOf(broken)))?.state).toBe('released');
    });

    it("leaves an event whose web process died between claim and enqueue to the service's retry, which queues it once", async () => {
      const { queue, receiver } = setup({ leaseMs: 3_000 });
      const ref = reference();
      // What a web process killed after its claim leaves behind: the queued key, claimed, nothing enqueued.
      // Its lease outlasts the receiver's budget (2.5 s), so the first copy answers 409 rather than wait it out.
      expect((await store.claim(queuedKey(keyOf(ref)), 3_000)).status).toBe('claimed');
      expect(await deliver(receiver, ref)).toBe('409 in-progress');
      expect(await queue.jobsFor(keyOf(ref))).toBe(0);
      await until(async () => (await deliver(receiver, ref)) === '200 queued', {
        timeoutMs: 15_000,
        intervalMs: 50,
        what: 'the lease to lapse',
      });
      expect(await deliver(receiver, ref)).toBe('200 duplicate');
      expect(await queue.jobsFor(keyOf(ref))).toBe(1);
    });

    it('answers 5xx when the enqueue fails, without a done record, so the retry queues the event', async () => {
      let fail = true;
      const { queue, receiver } = setup({
        handoff: (q) => ({
          enqueue: (job, ctx) => (fail ? Promise.reject(new Error('queue down')) : q.enqueue(job, ctx)),
        }),
      });
      const ref = reference();
      expect(await deliver(receiver, ref)).toBe('500 failed');
      expect((await store.get(queuedKey(keyOf(ref))))?.state).toBe('released');
      fail = false;
      expect(await deliver(receiver, ref)).toBe('200 queued');
      expect(await queue.jobsFor(keyOf(ref))).toBe(1);
    });

    it('has the reconciler queue an event the webhooks missed, once, and a second run queue nothing', async () => {
      const { queue, receiver, worker } = setup();
      const service = createReferenceService({
        clock: 'manual',
        allowHttpCallbacks: true,
        merchants: [{ id: 'shop', apiKeys: [{ key: SANDBOX_KEY }], webhookSecret: SECRET, callbackUrl: 'http://127.0.0.1:9/unreachable' }],
      });
      const running = await service.listen({ port: 0, host: '127.0.0.1' });
      open.push(running);
      const call = async (path: string, body?: unknown) => {
        const res = await fetch(running.url + path, {
          method: 'POST',
          headers: { authorization: `Bearer ${SANDBOX_KEY}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, json: (await res.json()) as { reference: string } };
      };
      const ran: string[] = [];
      worker.on('payment.success', (event) => void ran.push(event.reference));
      await worker.start();
      await call('/_sandbox/faults', { type: 'drop', count: 1 });
      const { json } = await call('/v1/transactions/initialize', {
        amount: '100.00',
        currencyCode: 'ETB',
        customerPhone: '0912345678',
        merchantReference: 'order-1',
      });
      expect((await call(`/_sandbox/transactions/${json.reference}/pay`)).status).toBe(200);
      const client = createClient({ apiKey: SANDBOX_KEY, baseUrl: running.url, priority: 'background' });
      const reconciler = createReconciler({ client, receiver, logger: quiet });
      const range = { from: new Date(service.clock.now() - 3_600_000), to: new Date(service.clock.now() + 60_000) };
      const first = await reconciler.run(range);
      expect(first.recovered.map((r) => `${r.reference} ${r.outcome}`)).toEqual([`${json.reference} queued`]);
      expect((await reconciler.run(range)).recovered).toEqual([]);
      await until(() => ran.length === 1, { timeoutMs: 20_000, intervalMs: 50, what: 'the worker' });
      expect(await queue.jobsFor(keyOf(json.reference))).toBe(1);
      expect(ran).toEqual([json.reference]);
    });
  });
}

// The queue contract for a platform (issue 50): a receiver with `accounts` hands each account's
// events to the queue under keys of their own, the job carries the account, and the worker runs the
// handlers with it as ctx.account. Asked of each engine as contract.ts is (conformance.test.ts).
import { createReceiver, type Receiver } from '@payhook/core';
import { postgresStore, type PostgresStore } from '@payhook/store-postgres';
import { createEvent, signedBody } from '@payhook/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '@payhook/test-support/wait';
import type { ContractEngine, TestQueue } from './contract.js';

const SECRETS: Record<string, string> = { acct_A: 'whsec_queue_accounts_a', acct_B: 'whsec_queue_accounts_b' };
const quiet = { info() {}, warn() {}, error() {} };
/** An account's key: its name, then the event's own key (the receiver's default dedupeKey). */
const keyOf = (account: string, reference: string) => `@${account}:sandbox:${reference}:payment.success`;

type Seen = { account: string | undefined; reference: string; dedupeKey: string };

export function queueAccountsContract(engineName: string, engine: ContractEngine, o: { databaseUrl: string; skip?: boolean }): void {
  describe.skipIf(Boolean(o.skip))(`the queue contract on ${engineName}, for a platform's accounts`, () => {
    const tag = engineName.replace(/[^a-z0-9]/g, '');
    const table = `qacct_${tag}_${Date.now()}`;
    let store: PostgresStore;
    let run = 0;
    const open: { close(): Promise<void> }[] = [];
    beforeAll(() => {
      store = postgresStore({ connectionString: o.databaseUrl, table });
    });
    afterEach(async () => {
      for (const x of open.splice(0).reverse()) await x.close();
    });
    afterAll(async () => {
      await engine.dispose?.(store);
      await store.pool.query(`drop table if exists ${table}`).catch(() => {});
      await store.close();
    });

    /** A fresh queue, a platform's receiver handing off to it, and a started worker that records each run's ctx. */
    async function setup() {
      run += 1;
      const queue: TestQueue = engine.queue({ store, name: `qacct-${tag}-${Date.now()}-${run}`, attempts: 2, backoffMs: 100 });
      const receiver = createReceiver({
        store,
        handoff: queue,
        logger: quiet,
        budgetMs: 1_000,
        accounts: { resolve: (name) => (Object.hasOwn(SECRETS, name) ? { secret: SECRETS[name]! } : undefined) },
      });
      const worker = queue.worker({ store, concurrency: 2, leaseMs: 2_000 });
      open.push(queue, worker);
      const seen: Seen[] = [];
      worker.on(
        'payment.success',
        (event, ctx) => void seen.push({ account: ctx.account, reference: event.reference, dedupeKey: ctx.dedupeKey }),
      );
      await worker.start();
      return { queue, receiver, seen };
    }
    /** The account's payment of `reference`, posted to its URL and signed with its secret. */
    const deliver = async (receiver: Receiver, account: string, reference: string) => {
      const { body, headers } = signedBody(createEvent('payment.success', { reference }), { secret: SECRETS[account]! });
      const response = await receiver.handle(
        new Request(`https://platform.example/webhooks/epay/${account}`, { method: 'POST', body, headers }),
      );
      return `${response.status} ${((await response.json()) as { outcome: string }).outcome}`;
    };
    const reference = () => `Pa${tag}${Date.now()}${run}`;
    /** Until the event's done record is written: its handlers ran, or had run. */
    const done = (key: string) =>
      until(async () => (await store.get(key))?.state === 'done', { timeoutMs: 20_000, intervalMs: 50, what: `the done record of ${key}` });

    it("queues A's and B's events of one reference apart, each job carrying its account; the worker runs each once with it", async () => {
      const { queue, receiver, seen } = await setup();
      const ref = reference();
      expect(await deliver(receiver, 'acct_A', ref)).toBe('200 queued');
      expect(await deliver(receiver, 'acct_B', ref)).toBe('200 queued');
      // A copy is each account's own duplicate; neither is taken for the other's.
      expect(await deliver(receiver, 'acct_B', ref)).toBe('200 duplicate');
      expect(await deliver(receiver, 'acct_A', ref)).toBe('200 duplicate');
      for (const account of ['acct_A', 'acct_B']) {
        expect(await queue.jobsFor(keyOf(account, ref))).toBe(1);
        expect(await queue.jobData(keyOf(account, ref))).toMatchObject({ v: 1, account, dedupeKey: keyOf(account, ref) });
      }
      await done(keyOf('acct_A', ref));
      await done(keyOf('acct_B', ref));
      expect(seen.sort((a, b) => String(a.account).localeCompare(String(b.account)))).toEqual([
        { account: 'acct_A', reference: ref, dedupeKey: keyOf('acct_A', ref) },
        { account: 'acct_B', reference: ref, dedupeKey: keyOf('acct_B', ref) },
      ]);
    });

    it('dead-letters, unrun, a job written straight into the queue whose account is not a name a receiver writes', async () => {
      const { queue, seen } = await setup();
      // Each job's key claims acct_A; its account field is no name a receiver writes.
      const forged = ['../acct_A', 'acct_\u0410', 'a'.repeat(65), 42].map((account, i) => ({ account, ref: `${reference()}f${i}` }));
      for (const { account, ref } of forged) {
        const event = createEvent('payment.success', { reference: ref });
        await queue.send({
          v: 1,
          event,
          dedupeKey: keyOf('acct_A', ref),
          source: 'webhook',
          secretIndex: 0,
          account,
          queuedAt: Date.now(),
        });
      }
      const keys = forged.map(({ ref }) => keyOf('acct_A', ref)).sort();
      await until(async () => (await queue.deadLetters()).filter((d) => keys.includes(d.dedupeKey)).length === keys.length, {
        timeoutMs: 30_000,
        intervalMs: 50,
        what: 'the forged jobs in the dead letters',
      });
      const dead = (await queue.deadLetters()).filter((d) => keys.includes(d.dedupeKey));
      expect(dead.map((d) => d.dedupeKey).sort()).toEqual(keys);
      for (const d of dead) expect(d.error).toMatch(/which no payhook receiver writes/);
      expect(seen).toEqual([]);
    });
  });
}

import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver, type DeliveryReport, type PaymentEvent, type Store } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import { createEvent, signedRequest } from '@payhook/testing';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import { tcpProxy, type TcpProxy } from '@payhook/test-support/servers/tcp-proxy';
import { sleep } from '@payhook/test-support/wait';

const SECRET = 'whsec_store_down';
const BUDGET_MS = 1_000;
// Real time throughout this file: a real server going away and coming back (through a real TCP
// proxy), its reconnection and its own lease clock are the things under test.

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();

interface Subject {
  name: string;
  url: string | undefined;
  make(url: string): Store;
  /** How the store's own errors start. */
  prefix: string;
}

const subjects: Subject[] = [
  {
    name: 'redis',
    url: redisUrl,
    make: (url) => redisStore({ url, prefix: 'payhook-test:', retentionMs: 3_600_000 }),
    prefix: '[@payhook/store-redis]',
  },
  { name: 'postgres', url: pgUrl, make: (url) => postgresStore({ connectionString: url }), prefix: '[@payhook/store-postgres]' },
];

const opened: { proxy: TcpProxy; store: Store }[] = [];
afterEach(async () => {
  for (const { proxy, store } of opened.splice(0)) {
    proxy.restore();
    await store.close?.();
    await proxy.close();
  }
});

for (const s of subjects) {
  describe.skipIf(!s.url)(`${s.name} going away`, () => {
    async function setup() {
      const real = new URL(s.url!);
      const proxy = await tcpProxy({ host: real.hostname, port: Number(real.port) });
      const store = s.make(proxy.url(s.url!));
      opened.push({ proxy, store });
      const effects = new Map<string, number>();
      const errors: DeliveryReport[] = [];
      const receiver = createReceiver({
        secret: SECRET,
        store,
        budgetMs: BUDGET_MS,
        leaseMs: 3_000,
        logger: { warn() {}, error: (report: DeliveryReport) => errors.push(report) },
      }).onAny((event) => {
        effects.set(event.reference, (effects.get(event.reference) ?? 0) + 1);
      });
      const deliver = async (event: PaymentEvent) => {
        const started = Date.now();
        const res = await receiver.handle(signedRequest(event, { secret: SECRET }));
        return { status: res.status, outcome: ((await res.json()) as { outcome: string }).outcome, ms: Date.now() - started };
      };
      return { proxy, effects, errors, deliver };
    }

    /** Redeliver as the service would, until a 2xx; returns the statuses seen on the way. */
    async function retryUntilOk(deliver: (e: PaymentEvent) => Promise<{ status: number; outcome: string }>, event: PaymentEvent) {
      const seen: string[] = [];
      const until = Date.now() + 15_000;
      for (;;) {
        const r = await deliver(event);
        seen.push(`${r.status} ${r.outcome}`);
        if (r.status < 300) return seen;
        if (Date.now() > until) throw new Error(`${s.name} did not come back: ${seen.join(', ')}`);
        await sleep(250); // real wait: the real server reconnects and its lease lapses on its own clock
      }
    }

    it('answers 503 fast while the server is unreachable, logs why, and recovers on its own', async () => {
      vi.spyOn(console, 'error').mockImplementation(() => {});
      const { proxy, effects, errors, deliver } = await setup();
      const a = createEvent('payment.success');
      const b = createEvent('payment.success');
      expect(await deliver(a)).toMatchObject({ status: 200, outcome: 'processed' });

      proxy.cut();
      const down = await deliver(b);
      expect(down).toMatchObject({ status: 503, outcome: 'store-unavailable' });
      expect(down.ms).toBeLessThan(BUDGET_MS + 500);
      const report = errors.find((e) => e.outcome === 'store-unavailable');
      expect(report).toMatchObject({ status: 503, reference: b.reference });
      expect(String(((report as { err?: unknown })!.err as Error).message)).toMatch(new RegExp(`^\\${s.prefix} could not claim .*503`));
      // A duplicate of a done event is not run again while the store is away: it waits too.
      expect(await deliver(a)).toMatchObject({ status: 503 });

      proxy.restore();
      const seen = await retryUntilOk(deliver, b);
      console.info(`[store-down ${s.name}] retries after restore:`, seen.join(', '));
      expect(seen.at(-1)).toBe('200 processed');
      expect(await deliver(b)).toMatchObject({ status: 200, outcome: 'duplicate' });
      expect(await deliver(a)).toMatchObject({ status: 200, outcome: 'duplicate' });
      expect(Object.fromEntries(effects)).toEqual({ [a.reference]: 1, [b.reference]: 1 });
      vi.restoreAllMocks();
    });

    it('answers 503 within the budget while the server hangs, and nothing is lost once it answers', async () => {
      const { proxy, effects, errors, deliver } = await setup();
      const a = createEvent('payment.success');
      const b = createEvent('payment.success');
      expect(await deliver(a)).toMatchObject({ status: 200, outcome: 'processed' });

      proxy.stall();
      const down = await deliver(b);
      expect(down).toMatchObject({ status: 503, outcome: 'store-unavailable' });
      expect(down.ms).toBeLessThan(BUDGET_MS + 500);
      expect(errors.some((e) => e.outcome === 'store-unavailable' && e.reference === b.reference)).toBe(true);

      await sleep(500); // real wait: the real server stays hung a while past the 503
      proxy.restore();
      // The claim sent into the hung connection may land once it answers: until its lease lapses
      // the retries get 409, then the event runs, once.
      const seen = await retryUntilOk(deliver, b);
      console.info(`[store-down ${s.name}] retries after restore:`, seen.join(', '));
      expect(seen.at(-1)).toBe('200 processed');
      for (const status of seen.slice(0, -1)) expect(['503 store-unavailable', '409 in-progress']).toContain(status);
      expect(await deliver(b)).toMatchObject({ status: 200, outcome: 'duplicate' });
      expect(Object.fromEntries(effects)).toEqual({ [a.reference]: 1, [b.reference]: 1 });
    });
  });
}

// The express example on Postgres (a fresh schema, dropped at the end), the reference service
// delivering to it, and a second receiver on the same store whose handler refuses every order:
// for the board's browser test (test/board/browser.test.ts).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, NonRetriableError } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { postgresStore } from '@payhook/store-postgres';
import pg from 'pg';
import { merchants, SANDBOX_KEY, SECRET, start, type Started } from '@payhook/test-support/apps/reference-service';
import { freePort, startExample, type RunningExample } from '@payhook/test-support/apps/examples';

export const BASE = '/admin/payments';
const TABLE = 'payhook_example_deliveries';

export interface Payment {
  reference: string;
  merchantReference: string;
}

export interface BoardExample {
  app: RunningExample;
  ref: Started;
  password: string;
  /** An order through the shop's checkout, paid at the service and delivered (`duplicate`: its delivery is sent twice). */
  pay(tag: string, options?: { duplicate?: boolean; phone?: string }): Promise<Payment>;
  /** A payment delivered to the second receiver, whose handler throws NonRetriableError: `rejected`, a dead letter in the shared ledger. */
  payRejected(tag: string): Promise<Payment>;
  close(): Promise<void>;
}

export async function startBoardExample(databaseUrl: string): Promise<BoardExample> {
  const suffix = randomBytes(4).toString('hex');
  const schema = `board_browser_${suffix}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const closers: Array<() => Promise<unknown>> = [
    async () => {
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      await admin.end();
    },
  ];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch((e) => console.error('[board browser] cleanup:', e));
  };
  try {
    const port = await freePort();
    const ref = await start({ allowHttpCallbacks: true, merchants: merchants(`http://127.0.0.1:${port}/webhooks`) });
    closers.push(() => ref.close());
    const password = randomBytes(12).toString('base64url');
    const app = await startExample('express', {
      PORT: String(port),
      PAYHOOK_BASE_URL: ref.url,
      PAYHOOK_API_KEY: SANDBOX_KEY,
      PAYHOOK_WEBHOOK_SECRET: SECRET,
      PAYHOOK_BOARD_PASSWORD: password,
      DATABASE_URL: url.toString(),
      REDIS_URL: '', // the shop prefers Redis when it is set: Postgres here
    });
    closers.push(() => app.stop());

    // The same shop in a second process would share this store; this one refuses every order.
    const store = postgresStore({ connectionString: url.toString(), table: TABLE, ledger: true });
    const sibling = createReceiver({ secret: SECRET, store, logger: () => {} }).onAny((event) => {
      throw new NonRetriableError(`order ${event.merchantReference} is not in this process's books`);
    });
    const server = createServer(toNodeListener(sibling));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => store.close?.() ?? Promise.resolve());
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const siblingUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;

    const payAtService = async (reference: string) => {
      const paid = await ref.call('POST', `/_sandbox/transactions/${reference}/pay`);
      if (paid.status !== 200) throw new Error(`pay ${reference}: ${paid.status} ${JSON.stringify(paid.json)}`);
      await ref.service.clock.advance(0);
    };
    return {
      app,
      ref,
      password,
      async pay(tag, { duplicate = false, phone = '0911234567' } = {}) {
        const merchantReference = `${tag}-${suffix}`;
        const res = await fetch(`${app.url}/checkout`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ amount: '120.00', currencyCode: 'ETB', customerPhone: phone, merchantReference }),
        });
        if (res.status !== 200) throw new Error(`checkout ${merchantReference}: ${res.status} ${await res.text()}`);
        const { reference } = (await res.json()) as { reference: string };
        if (duplicate) await ref.call('POST', '/_sandbox/faults', { body: { type: 'duplicate', count: 1, times: 1, reference } });
        await payAtService(reference);
        return { reference, merchantReference };
      },
      async payRejected(tag) {
        const merchantReference = `${tag}-${suffix}`;
        const reference = await ref.initialize({ merchantReference, callbackUrl: siblingUrl });
        await payAtService(reference);
        await sibling.idle();
        return { reference, merchantReference };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

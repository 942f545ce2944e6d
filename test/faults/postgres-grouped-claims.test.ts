import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createReceiver, sign, type DeliveryReport } from '@payhook/core';
import { adapterOf } from '@payhook/core/adapter';
import { postgresStore } from '@payhook/store-postgres';
import { createEvent } from '@payhook/testing';
import { until } from '@payhook/test-support/wait';
import { startPostgres } from '@payhook/test-support/servers/postgres-server';

/**
 * A claim answered from a group is as durable as one answered alone: 16 deliveries arrive together,
 * their claims go to Postgres as one statement, and once all 16 handlers are running, Postgres is
 * killed with `kill -9` (no checkpoint; recovery replays the WAL). Every claim must be there after
 * the restart, still held: a handler only ever runs on a claim the disk has.
 */
const SECRET = 'whsec_grouped_claims';
const DELIVERIES = 16;
const server = await startPostgres();

describe.skipIf(!server)('grouped claims under kill -9 of PostgreSQL', () => {
  afterAll(async () => {
    await server?.stop();
  });

  it('keeps every claim of a group whose handlers were running when the database was killed', async () => {
    const store = postgresStore({ connectionString: server!.url, purge: false });
    let grouped = 0;
    let claimStatements = 0;
    const query = store.pool.query.bind(store.pool);
    store.pool.query = ((config: { text?: string }, ...rest: unknown[]) => {
      if (config?.text?.includes('INSERT INTO')) claimStatements++;
      if (config?.text?.includes('unnest(') && config.text.includes('INSERT INTO')) grouped++;
      return (query as (...a: unknown[]) => unknown)(config, ...rest);
    }) as typeof store.pool.query;
    await store.createTable();

    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const running = new Set<string>();
    const receiver = createReceiver({ secret: SECRET, store, leaseMs: 120_000, logger: { warn() {}, error() {} } }).on(
      'payment.success',
      async (event) => {
        running.add(event.reference);
        await gate;
      },
    );
    const run = randomUUID().slice(0, 8);
    const events = Array.from({ length: DELIVERIES }, (_, i) => createEvent('payment.success', { reference: `grp_${run}_${i}` }));
    const answers: Promise<DeliveryReport | Error>[] = events.map((event) => {
      const body = JSON.stringify(event);
      return adapterOf(receiver)
        .process({ method: 'POST', signature: sign(body, SECRET), body })
        .then(
          (r) => r.report,
          (e: Error) => e,
        );
    });
    await until(() => running.size === DELIVERIES, { what: () => `all ${DELIVERIES} handlers running (${running.size} are)` });
    // They were claimed together: fewer claim statements than deliveries, and at least one grouped.
    expect(grouped).toBeGreaterThanOrEqual(1);
    expect(claimStatements).toBeLessThan(DELIVERIES);

    await server!.kill9();

    const reader = new pg.Client({ connectionString: server!.url });
    await reader.connect();
    try {
      const keys = events.map((e) => `${e.mode}:${e.reference}:${e.event}`);
      const { rows } = await reader.query<{ key: string; state: string; held: boolean }>(
        'select key, state, lease_expires_at > clock_timestamp() as held from payhook_deliveries where key = any($1)',
        [keys],
      );
      expect(rows.map((r) => `${r.state} ${r.held}`).sort()).toEqual(keys.map(() => 'claimed true'));
    } finally {
      await reader.end();
    }
    open();
    await Promise.all(answers);
    await store.close();
  }, 60_000);
});

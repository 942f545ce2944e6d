import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { postgresStore } from '@payhook/store-postgres';
import { createEvent } from '@payhook/testing';
import { contextFor } from './handler-context.js';
import { requirePostgres } from '@payhook/test-support/services';

/**
 * transactional()'s limit (issue 37): a transaction on a connection a partition silenced would
 * hold its pooled connection and its row lock for ever. The partition itself is in
 * test/faults/partition.test.ts; here, the limit on a real server.
 */
const url = await requirePostgres();

describe.skipIf(!url)('postgres store: the transaction limit', () => {
  const pool = new pg.Pool({ connectionString: url!, max: 2 });
  const table = `payhook_test_${randomUUID().slice(0, 8)}`;
  const store = postgresStore({ pool, table, transactionTimeoutMs: 300 });
  const claim = async (key: string) => {
    const c = await store.claim(key, 30_000);
    if (c.status !== 'claimed') throw new Error(`expected a claim, got ${c.status}`);
    return c.token;
  };

  afterAll(async () => {
    await store.close();
    await pool.query(`drop table if exists ${table}, ${table}_effects`);
    await pool.end();
  });

  it('ends a transaction past transactionTimeoutMs: the package error names the option, and nothing commits', async () => {
    await store.createTable();
    await pool.query(`create table ${table}_effects (key text not null)`);
    const key = `slow-${randomUUID()}`;
    const token = await claim(key);
    const slow = store.transactional(async (_event, ctx, client) => {
      await client.query(`insert into ${table}_effects (key) values ($1)`, [ctx.dedupeKey]);
      // The server finishes the sleep after the client is gone, then finds the socket closed and rolls back.
      await client.query('select pg_sleep(1)');
    });
    const error = await Promise.resolve(slow(createEvent('payment.success', { reference: key }), contextFor(key, token))).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(
      /^\[@payhook\/store-postgres\] the connection to PostgreSQL broke during a transaction .*raise transactionTimeoutMs if your handler needs longer\.$/,
    );
    // Neither the effect nor the done record: the claim is still this delivery's, to release.
    expect((await pool.query(`select count(*)::int as n from ${table}_effects where key = $1`, [key])).rows[0].n).toBe(0);
    expect((await store.get(key))?.state).toBe('claimed');
    // Once the server has rolled back, the claim is free for a release, as after any failed handler.
    expect(await store.release(key, token)).toBe(true);
  });

  it('tells the server the same limit, so a backend waiting on a silent client ends and drops its locks', async () => {
    const key = `show-${randomUUID()}`;
    const token = await claim(key);
    let seen = '';
    const show = store.transactional(async (_event, _ctx, client) => {
      seen = (await client.query<{ idle_in_transaction_session_timeout: string }>('show idle_in_transaction_session_timeout')).rows[0]!
        .idle_in_transaction_session_timeout;
    });
    await show(createEvent('payment.success', { reference: key }), contextFor(key, token));
    expect(seen).toBe('300ms');
    expect((await store.get(key))?.state).toBe('done');
    // SET LOCAL: the pooled connection goes back with the server's default.
    expect(
      (await pool.query<{ idle_in_transaction_session_timeout: string }>('show idle_in_transaction_session_timeout')).rows[0]!
        .idle_in_transaction_session_timeout,
    ).not.toBe('300ms');
  });

  it('takes a limit past what a timer or Postgres can hold as their longest (about 24.8 days)', async () => {
    const patient = postgresStore({ pool, table, transactionTimeoutMs: 1e12, purge: false });
    const key = `long-${randomUUID()}`;
    const token = await claim(key);
    let seen = '';
    await patient.transactional(async (_event, _ctx, client) => {
      seen = (await client.query<{ idle_in_transaction_session_timeout: string }>('show idle_in_transaction_session_timeout')).rows[0]!
        .idle_in_transaction_session_timeout;
    })(createEvent('payment.success', { reference: key }), contextFor(key, token));
    expect(seen).toBe('2147483647ms');
    expect((await store.get(key))?.state).toBe('done');
  });

  it('refuses a limit that is not a positive number of milliseconds, naming the option', () => {
    expect(() => postgresStore({ pool, transactionTimeoutMs: 0 })).toThrow(
      /^\[@payhook\/store-postgres\] transactionTimeoutMs must be a positive number/,
    );
  });
});

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type ChildReceiver } from '@payhook/test-support/children';
import { countPg, effectsTable } from '@payhook/test-support/effects';
import { DATABASE_URL } from '@payhook/test-support/services';
import { startPostgres } from '@payhook/test-support/servers/postgres-server';
import { serviceLoad, tally } from './service.js';

/**
 * PostgreSQL goes away under load: a private cluster is restarted (`pg_ctl restart -m fast`) or
 * killed with `kill -9` while two receiver processes run deliveries with duplicates, and the
 * service retries what was not answered 2xx. The receivers must stay up, and every event's effect
 * must be in the merchant's table: exactly once with `transactional()`, at least once with a
 * plain handler (README "What exactly-once rests on").
 */
const SECRET = 'whsec_pg_faults';
const EVENTS = 160;
/** The fault comes while this event's deliveries start: a quarter in, with transactions open. */
const FAULT_AT = 40;

const server = await startPostgres();

type Fault = 'restart' | 'kill9';

async function underLoad(effect: 'pg-transactional' | 'pg-insert', fault: Fault) {
  const run = randomUUID();
  const pool = await effectsTable(server!.url);
  await pool.end();
  const env = {
    CHILD_STORE: 'postgres',
    CHILD_URL: server!.url,
    CHILD_SECRET: SECRET,
    CHILD_RUN: run,
    CHILD_EFFECT: effect,
    // Each transaction stays open 20 ms, so the fault finds several open.
    CHILD_EFFECT_MS: '20',
    CHILD_LEASE_MS: '3000',
    CHILD_BUDGET_MS: '2500',
  };
  const children: ChildReceiver[] = await Promise.all([startReceiver(env), startReceiver(env)]);
  let faulted: Promise<void> | undefined;
  let wentDown!: () => void;
  const down = new Promise<void>((resolve) => (wentDown = resolve));
  const started = performance.now();
  try {
    const fates = await serviceLoad({
      ports: children.map((c) => c.port),
      secret: SECRET,
      run,
      events: EVENTS,
      onEvent: (i) => {
        if (i === FAULT_AT) faulted = fault === 'restart' ? server!.restart(wentDown) : server!.kill9(wentDown);
        // Later events start once the server is down, so the fault is always felt, however fast the load before it ran.
        return i >= FAULT_AT ? down : undefined;
      },
    });
    await faulted;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const effects = await (async () => {
      const reader = await effectsTable(server!.url);
      try {
        return await countPg(reader, run);
      } finally {
        await reader.end();
      }
    })();
    const stderr = children.map((c) => c.stderr()).join('\n');
    // Whether each process lived through it, read before they are stopped below.
    const alive = children.map((c) => c.process.exitCode === null && c.process.signalCode === null);
    return { fates, effects, alive, seconds, stderr };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}

describe.skipIf(!server)('PostgreSQL restarted or killed under load', () => {
  beforeAll(async () => {
    // The cluster is the suite's own: the shared one the other files use is never restarted or killed.
    expect(new URL(server!.url).port).not.toBe(new URL(DATABASE_URL).port);
    // Exactly once across a kill -9 rests on a server that acknowledges a commit only once it is on
    // disk (README "What exactly-once rests on"); on a lax one, a pass here would prove nothing.
    const client = new pg.Client({ connectionString: server!.url });
    await client.connect();
    try {
      const settings = [];
      for (const name of ['fsync', 'synchronous_commit'])
        settings.push(`${name}=${(await client.query<Record<string, string>>(`show ${name}`)).rows[0]![name]}`);
      expect(settings).toEqual(['fsync=on', 'synchronous_commit=on']);
    } finally {
      await client.end();
    }
  });
  afterAll(async () => {
    await server?.stop();
  });

  for (const fault of ['restart', 'kill9'] as const) {
    it(`${fault} with transactional(): the receivers stay up, every event is acknowledged and its effect is there exactly once`, async () => {
      const { fates, effects, alive, seconds, stderr } = await underLoad('pg-transactional', fault);
      console.info(`[faults:postgres] ${fault}, transactional: ${EVENTS} events in ${seconds} s`, tally(fates));
      // Both processes lived through it: a checked-out client's 'error' used to end them.
      expect(alive, stderr).toEqual([true, true]);
      expect(fates.filter((f) => !f.acked).map((f) => f.answers)).toEqual([]);
      expect([...effects.values()].filter((n) => n !== 1)).toEqual([]);
      expect(effects.size).toBe(EVENTS);
      // The fault was felt: some deliveries were answered 5xx or lost their connection and were retried.
      expect(fates.some((f) => f.answers.some((a) => a.startsWith('5') || a === 'network'))).toBe(true);
      // Only the answers of the status table, never another 5xx.
      for (const answer of Object.keys(tally(fates))) {
        expect([
          '200 processed',
          '200 duplicate',
          '202 accepted',
          '409 in-progress',
          '500 failed',
          '503 store-unavailable',
          'network',
        ]).toContain(answer);
      }
    }, 120_000);
  }

  it.each(['restart', 'kill9'] as const)(
    '%s with a plain handler: the receivers stay up and every acknowledged event has its effect at least once',
    async (fault) => {
      const { fates, effects, alive, seconds, stderr } = await underLoad('pg-insert', fault);
      const reruns = [...effects.values()].filter((n) => n > 1).length;
      console.info(`[faults:postgres] ${fault}, plain handler: ${EVENTS} events in ${seconds} s, ${reruns} ran twice`, tally(fates));
      expect(alive, stderr).toEqual([true, true]);
      expect(fates.filter((f) => !f.acked).map((f) => f.answers)).toEqual([]);
      for (const f of fates) expect(effects.get(f.reference) ?? 0, f.reference).toBeGreaterThanOrEqual(1);
      expect(fates.some((f) => f.answers.some((a) => a.startsWith('5') || a === 'network'))).toBe(true);
    },
    120_000,
  );
});

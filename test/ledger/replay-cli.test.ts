import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { toNodeListener } from '@payhook/core/node';
import type { LedgerEntry } from '@payhook/core';
import { countPg, effectsTable } from '@payhook/test-support/effects';
import { merchants, SECRET, start, type Started } from '@payhook/test-support/apps/reference-service';
import { requirePostgres } from '@payhook/test-support/services';
import { until } from '@payhook/test-support/wait';

const pgUrl = await requirePostgres();
const root = fileURLToPath(new URL('../..', import.meta.url));
const BIN = 'packages/core/bin/payhook.mjs';
const APP = 'test/ledger/apps/app.ts';
const run = `ledger_${process.pid}_${Date.now().toString(36)}`;
const table = `payhook_ledger_e2e_${Date.now().toString(36)}`;
const env = { LEDGER_PG_URL: pgUrl ?? '', LEDGER_TABLE: table, LEDGER_RUN: run, LEDGER_SECRET: SECRET };

/** The `payhook` command as a merchant runs it, in its own process; its exit code and output. */
const payhook = (args: string[], extraEnv: Record<string, string> = {}) => node(['--import', 'tsx', BIN, ...args, '--app', APP], extraEnv);
/** `node` with these arguments, from the repository's root (where node_modules/@payhook/core is core, as in a merchant's app). */
async function node(argv: string[], extraEnv: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, argv, {
      cwd: root,
      env: { ...process.env, ...env, ...extraEnv },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * The reference service delivers to a running app whose handlers fail: payments are refused with
 * NonRetriableError (200 rejected) and a cancellation fails after its 202. The merchant finds
 * them with `payhook dead-letters list`, deploys the fix (APP_FIXED=1) and runs `payhook
 * dead-letters retry`: each event is processed once, and the dead letters are closed.
 */
describe.skipIf(!pgUrl)('replay and dead letters, end to end through the payhook command', () => {
  let ref: Started;
  let server: Server;
  let effects: pg.Pool;
  let app: typeof import('./apps/app.js');
  const references: string[] = [];

  beforeAll(async () => {
    effects = await effectsTable(pgUrl!);
    Object.assign(process.env, env);
    app = await import('./apps/app.js');
    server = createServer(toNodeListener(app.receiver));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    ref = await start({ allowHttpCallbacks: true, merchants: merchants(`http://127.0.0.1:${port}/webhooks`) });
  }, 30_000);

  afterAll(async () => {
    await ref?.close();
    ref?.service.close();
    await new Promise((r) => server?.close(r));
    await app?.store.pool.query(`drop table if exists ${table}; drop table if exists ${table}_ledger`).catch(() => {});
    await app?.store.close();
    await effects?.end();
  });

  it('lists the dead letters, retries them once the handlers are fixed, and each event is processed once', async () => {
    for (const [i, action] of ['pay', 'pay', 'cancel'].entries()) {
      const reference = await ref.initialize({ merchantReference: `${run}-${i}` });
      references.push(reference);
      expect((await ref.call('POST', `/_sandbox/transactions/${reference}/${action}`)).status).toBe(200);
    }
    const deliveries = () => references.flatMap((reference) => ref.service.deliveries({ reference }));
    await until(() => deliveries().length === 3 && deliveries().every((d) => d.state === 'delivered'), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'three deliveries answered 2xx',
    });
    // The ledger has the cancellation's late failure once its handler ended.
    const ledger = app.store.ledger!;
    await until(async () => (await ledger.list({ deadLetters: 'open' })).length === 3, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'three dead letters',
    });

    const listed = await payhook(['dead-letters', 'list']);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n').filter((l) => references.some((r) => l.includes(r)));
    expect(lines).toHaveLength(3);
    expect(lines.filter((l) => /200 rejected\s.*dead: rejected/.test(l))).toHaveLength(2);
    expect(lines.filter((l) => /202 accepted -> failed\s.*dead: late-failed/.test(l))).toHaveLength(1);

    const json = await payhook(['deliveries', 'list', '--reference', references[0]!, '--json']);
    const [paid] = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LedgerEntry);
    expect(paid).toMatchObject({
      reference: references[0],
      event: 'payment.success',
      outcome: 'rejected',
      signature: 'valid',
      error: expect.stringContaining('unknown to the order system'),
    });
    const shown = await payhook(['deliveries', 'show', paid!.id]);
    expect(shown.stdout).toContain(`reference: ${references[0]}`);
    expect(shown.stdout).toMatch(/body:\n\{\n {2}"event": "payment.success"/);

    // A replay without force finds the refused payment done: duplicate, and no handler runs.
    const early = await payhook(['replay', paid!.id]);
    expect(early.stdout).toMatch(/: duplicate \(200\)/);

    const retried = await payhook(['dead-letters', 'retry'], { APP_FIXED: '1' });
    expect(retried.stderr).toBe('');
    expect(retried.code).toBe(0);
    expect(retried.stdout).toMatch(/3 of 3 dead letters closed/);
    expect(retried.stdout.match(/\(forced\) -> \S+: processed \(200\)/g)).toHaveLength(2);
    expect(retried.stdout.match(/^\S+ -> \S+: processed \(200\)$/gm)).toHaveLength(1);
    const counts = await countPg(effects, run);
    expect(Object.fromEntries(counts)).toEqual(
      Object.fromEntries(references.map((r, i) => [`${r}:${i < 2 ? 'payment.success' : 'payment.cancelled'}`, 1])),
    );

    // Nothing is left open, and a second retry or a replay runs nothing again.
    expect((await payhook(['dead-letters', 'list'])).stdout).toBe('no open dead letters\n');
    expect((await payhook(['dead-letters', 'retry'], { APP_FIXED: '1' })).stdout).toContain('0 of 0 dead letters closed');
    const again = await payhook(['replay', paid!.id], { APP_FIXED: '1' });
    expect(again.stdout).toMatch(/: duplicate \(200\)/);
    expect(Object.fromEntries(await countPg(effects, run))).toEqual(Object.fromEntries(counts));
  }, 120_000);

  it('says what to do when it is pointed at nothing, or at a delivery that is not there', async () => {
    const none = await payhook(['deliveries', 'show', 'nope']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^\[@payhook\/core\] payhook: no delivery nope in the ledger/);
    const bad = await payhook(['deliveries', 'list', '--since', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--since must be an ISO 8601 time/);
    const unknown = await payhook(['deliveries', 'frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command: deliveries frobnicate/);
    // payhook's own error (replay's, for an id not in the ledger): its message once, and no stack.
    const replayed = await payhook(['replay', 'nope']);
    expect(replayed.code).toBe(1);
    expect(replayed.stdout).toBe('');
    expect(replayed.stderr).toMatch(
      /^\[@payhook\/core\] no delivery "nope" in the ledger: .* List the recorded ones with `payhook deliveries list`\.\n$/,
    );
  }, 60_000);

  it('names the command that loads a TypeScript app, and that command works', async () => {
    // Node 22.6+ can strip types itself: turned off, so this runs as on Node 20.
    const strip = (process.features as { typescript?: unknown }).typescript ? ['--no-experimental-strip-types'] : [];
    const plain = await node([...strip, BIN, 'deliveries', 'list', '--reference', `${run}-x`, '--app', APP]);
    expect(plain.code).toBe(2);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(
      /^\[@payhook\/core\] payhook: cannot load test\/ledger\/apps\/app\.ts: Node does not run TypeScript by itself \(Unknown file extension "\.ts" for .*\)\. Run the command through tsx/,
    );
    expect(plain.stderr).not.toMatch(/ERR_UNKNOWN_FILE_EXTENSION|^\s+at /m);
    const suggested = /^ {2}node (.+)$/m.exec(plain.stderr)?.[1];
    expect(suggested).toBe(
      `--import tsx node_modules/@payhook/core/bin/payhook.mjs deliveries list --reference ${run}-x --app test/ledger/apps/app.ts`,
    );
    const again = await node([...strip, ...suggested!.split(' ')]);
    expect(again).toEqual({ code: 0, stdout: 'no deliveries match\n', stderr: '' });
  }, 60_000);

  it('says that an app whose ledger is in memory cannot be read by the command, and what to use', async () => {
    const memory = await node(['--import', 'tsx', BIN, 'deliveries', 'list', '--app', 'test/ledger/apps/memory-app.ts']);
    expect(memory.code).toBe(2);
    expect(memory.stdout).toBe('');
    expect(memory.stderr).toMatch(
      /^\[@payhook\/core\] payhook: the app's store keeps its ledger in memory \(memoryStore\), which lives in the app's own process: this command runs in another, and cannot read it\. Keep the ledger in Redis, Postgres or a SQLite file: redisStore\(\{ url, ledger: true \}\) .*, postgresStore\(\{ connectionString, ledger: true \}\) .*, or sqliteStore\(\{ path, ledger: true \}\)/,
    );
  }, 60_000);
});

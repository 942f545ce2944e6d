import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/cli.js';
import { startReferenceService, type TestReferenceService } from '@payhook/testing';

/**
 * `payhook reconcile --since --until`, the command a store's switch-of-primary error names: it
 * runs, through the app's own reconciler, every event of the window's transactions that has no
 * done record, against the reference service over HTTP. The failover it is for is
 * test/faults/postgres-failover.test.ts.
 */
const app = fileURLToPath(new URL('../fixtures/reconcile-app.ts', import.meta.url));
const noReconciler = fileURLToPath(new URL('../fixtures/erase-app.ts', import.meta.url));
const MINUTE = 60_000;

let ref: TestReferenceService;
beforeAll(async () => {
  // No target: every webhook of these payments fails, as the ones a failover forgot never arrive again.
  ref = await startReferenceService();
  Object.assign(process.env, ref.env);
});
afterAll(() => ref?.close());

async function payhook(args: string[]): Promise<{ code: number; lines: string[] }> {
  const out = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    const code = await main(['reconcile', ...args, '--app', app]);
    return { code, lines: out.mock.calls.map((c) => String(c[0])) };
  } finally {
    out.mockRestore();
  }
}

describe('payhook reconcile', () => {
  it('runs every paid event of the window that has no done record, once, and a second run runs none', async () => {
    const { effects } = await import('../fixtures/reconcile-app.js');
    const since = new Date(ref.clock.now()).toISOString();
    const refs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { reference } = await ref.createTransaction();
      await ref.pay(reference);
      refs.push(reference);
    }
    await ref.advance(MINUTE);
    const until = new Date(ref.clock.now()).toISOString();

    const first = await payhook(['--since', since, '--until', until]);
    expect(first.code).toBe(0);
    expect(first.lines.slice(0, -1).sort()).toEqual(refs.map((r) => `ran ${r} payment.success: processed (200)`).sort());
    expect(first.lines.at(-1)).toBe(`3 transactions from ${since} to ${until}: 3 events ran, 0 held by a running delivery, 0 failed`);
    expect([...effects].sort()).toEqual(refs.map((r) => `${r} payment.success`).sort());

    const again = await payhook(['--since', since, '--until', until, '--json']);
    expect(again.code).toBe(0);
    expect(again.lines).toEqual([JSON.stringify({ scanned: 3, ran: 0, held: 0, failed: 0 })]);
    expect(effects).toHaveLength(3);
  });

  it('a window before the payments scans nothing', async () => {
    const before = new Date(ref.clock.now() - 60 * MINUTE).toISOString();
    const { code, lines } = await payhook(['--since', before, '--until', new Date(ref.clock.now() - 30 * MINUTE).toISOString(), '--json']);
    expect({ code, lines }).toEqual({ code: 0, lines: [JSON.stringify({ scanned: 0, ran: 0, held: 0, failed: 0 })] });
  });

  it('says what is missing: the window, or the reconciler the app must export', async () => {
    await expect(main(['reconcile', '--app', app])).rejects.toThrow(/say the window: --since <time> \[--until <time>\]/);
    await expect(main(['reconcile', '--since', 'yesterday', '--app', app])).rejects.toThrow(
      /--since must be an ISO 8601 time or epoch milliseconds/,
    );
    await expect(main(['reconcile', '--since', '0', '--app', noReconciler])).rejects.toThrow(
      /erase-app\.ts exports no reconciler: export the one createReconciler\(\{ client, receiver \}\) made/,
    );
    await expect(main(['reconcile', '--since', '0', '--account', 'shop-a', '--app', app])).rejects.toThrow(
      /exports no reconcilerFor: for --account, export `reconcilerFor\(account\)`/,
    );
  });
});

import { execFile, spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { until } from '@payhook/test-support/wait';
import { freePort } from '@payhook/test-support/apps/examples';

const root = fileURLToPath(new URL('..', import.meta.url));
// The pnpm the README's `npx -y pnpm@10.34.8` fetches, from the root devDependencies.
const pnpm = `${root}node_modules/.bin/pnpm`;
const OPENING = /^payhook demo: the reference service at http:\/\/127\.0\.0\.1:\d+, the Express shop at http:\/\/127\.0\.0\.1:\d+$/;

/** Run `pnpm <args>` in its own process group, as a terminal runs a foreground command. */
function startPnpm(args: string[]) {
  const child = spawn(pnpm, args, { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  const waiters = new Set<() => void>();
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  void closed.then(() => {
    done = true;
    for (const w of waiters) w();
  });
  for (const name of ['stdout', 'stderr'] as const) {
    child[name].setEncoding('utf8').on('data', (chunk: string) => {
      output[name] += chunk;
      for (const w of waiters) w();
    });
  }
  return {
    output,
    closed,
    /** Resolves once stdout matches `pattern`; rejects if the process ends first. */
    waitFor(pattern: RegExp) {
      return new Promise<RegExpMatchArray>((resolve, reject) => {
        const check = () => {
          const match = output.stdout.match(pattern);
          if (match) resolve(match);
          else if (done) reject(new Error(`pnpm ${args.join(' ')} ended before printing ${pattern}:\n${output.stdout}\n${output.stderr}`));
          else return;
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    /** Signal every process of the group: pnpm, the demo and whatever they started. */
    signal(signal: NodeJS.Signals) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // The group is gone already.
      }
    },
  };
}

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
    /`npx -y pnpm@10\.34\.8 demo --keep`/,
    // As ePay signs: the service sends X-Epay-Signature, the shop's receiver reads it (issue 51).
    /^The service signs each webhook in X-Epay-Signature, as ePay does; the shop's receiver reads that header \(signatureHeader: EPAY_SIGNATURE_HEADER\)\.$/m,
    /✓ every webhook the shop answered came signed in X-Epay-Signature \(\d+ deliveries\)/,
  ]) {
    expect(stdout).toMatch(line);
  }
}, 60_000);

it('`pnpm demo` starts with the narration, builds nothing, and prints no dashboard URL that is gone when it exits', async () => {
  const demo = startPnpm(['demo']);
  try {
    const { code } = await demo.closed;
    const { stdout, stderr } = demo.output;
    expect(code, stderr).toBe(0);
    // Before the narration, only pnpm's echo of the script it runs, between blank lines:
    // `> payhook-workspace@ demo <dir>` and `> exec … scripts/demo.ts`. No build, no other script.
    const lines = stdout.split('\n');
    const first = lines.findIndex((line) => !line.startsWith('> ') && line !== '');
    expect(lines.slice(0, first)).toEqual([
      '',
      `> payhook-workspace@ demo ${root.replace(/\/$/, '')}`,
      expect.stringMatching(/^> exec .*scripts\/demo\.ts$/),
      '',
    ]);
    expect(lines[first]).toMatch(OPENING);
    expect(stdout).not.toContain('_dashboard');
    expect(stdout).toContain('run `npx -y pnpm@10.34.8 demo --keep` (`pnpm demo --keep` with pnpm installed)');
  } finally {
    demo.signal('SIGKILL');
  }
}, 60_000);

it('`pnpm demo --keep` keeps both servers up on the ports asked for, shows how to use them, and stops cleanly on Ctrl-C', async () => {
  // Without flags --keep takes 4010 and 3000, the same every run; tests bind free ports.
  const [servicePort, shopPort] = [await freePort(), await freePort()];
  const demo = startPnpm(['demo', '--keep', '--service-port', String(servicePort), '--shop-port', String(shopPort)]);
  try {
    await demo.waitFor(/Press Ctrl-C to stop\./);
    const { stdout } = demo.output;
    const field = (name: string) => stdout.match(new RegExp(`^   ${name} {2,}(\\S+)`, 'm'))?.[1];
    const service = field('service')!;
    const shop = field('shop')!;
    const apiKey = field('API key')!;
    expect(service).toBe(`http://127.0.0.1:${servicePort}`);
    expect(shop).toBe(`http://127.0.0.1:${shopPort}`);
    expect(field('dashboard')).toBe(`${service}/_dashboard`);
    expect(apiKey).toBe('sk_test_demo_shop_key_000001');
    expect(field('webhook secret')).toBe('whsec_demo_shop_secret');
    expect((await fetch(`${service}/_dashboard`)).status).toBe(200);
    // The shop's board, behind the password this run printed.
    expect(field('board')).toBe(`${shop}/admin/payments`);
    const password = stdout.match(/^ {3}board .*\(user admin, password (\S+):/m)?.[1];
    expect((await fetch(`${shop}/admin/payments`)).status).toBe(401);
    const board = await fetch(`${shop}/admin/payments`, { headers: { authorization: `Basic ${btoa(`admin:${password}`)}` } });
    expect(board.status).toBe(200);

    // The printed checkout command, as curl would send it.
    const checkoutCommand = stdout.match(/^ {3}curl -X POST (\S+) -H 'content-type: application\/json' -d '([^']*)'$/m);
    expect(checkoutCommand?.[1]).toBe(`${shop}/checkout`);
    const body = JSON.parse(checkoutCommand![2]!) as { merchantReference: string };
    const answer = await fetch(checkoutCommand![1]!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: checkoutCommand![2],
    });
    expect(answer.status).toBe(200);
    const { reference, checkoutUrl } = (await answer.json()) as { reference: string; checkoutUrl: string };
    expect(checkoutUrl).toBe(`${service}/checkout/${reference}`);
    expect((await fetch(checkoutUrl)).status).toBe(200);

    // The printed sandbox pay command, with the answer's reference.
    const payCommand = stdout.match(/^ {3}curl -X POST (\S+) -H 'authorization: Bearer (\S+)'$/m);
    expect(payCommand?.[1]).toBe(`${service}/_sandbox/transactions/<reference>/pay`);
    expect(payCommand?.[2]).toBe(apiKey);
    const paid = await fetch(payCommand![1]!.replace('<reference>', reference), {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(paid.status).toBe(200);

    // The service delivers the webhook on its own (its clock runs on real time), and the demo narrates it.
    expect(stdout).toContain(`curl ${shop}/orders/${body.merchantReference}`);
    let order: { events: string[] } = { events: [] };
    await until(
      async () =>
        (order = (await (await fetch(`${shop}/orders/${body.merchantReference}`)).json()) as { events: string[] }).events.includes(
          'payment.success',
        ),
      {
        timeoutMs: 10_000,
        intervalMs: 100,
        what: () => `the shop's order to record payment.success (${JSON.stringify(order)})`,
      },
    );
    expect(order.events).toEqual(['payment.success']);
    await demo.waitFor(new RegExp(`shop ← payment\\.success ${reference}: signature verified, first time seen: handler ran \\(200\\)`));

    // Ctrl-C: the terminal sends SIGINT to the whole foreground process group.
    demo.signal('SIGINT');
    const { code, signal } = await demo.closed;
    const all = demo.output.stdout + demo.output.stderr;
    expect({ code, signal }, all).toEqual({ code: 0, signal: null });
    expect(demo.output.stdout).toMatch(/\nstopped\.\n$/);
    expect(all).not.toContain('ELIFECYCLE');
  } finally {
    demo.signal('SIGKILL');
  }
}, 60_000);

it('`pnpm demo --keep` on a port in use says which, and how to pick another', async () => {
  const busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  const { port } = busy.address() as net.AddressInfo;
  try {
    const demo = startPnpm(['demo', '--keep', '--service-port', String(port), '--shop-port', '0']);
    const { code } = await demo.closed;
    expect(code).toBe(1);
    expect(demo.output.stderr).toContain(
      `[payhook demo] port ${port} on 127.0.0.1 is in use (another demo still running?): stop what uses it, or pick another with --service-port <port> (0 picks a free one).`,
    );
    expect(demo.output.stderr).not.toMatch(/^\s+at /m);
  } finally {
    busy.close();
  }
}, 60_000);

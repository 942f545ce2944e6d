// The release check: every package packed as `pnpm publish` ships it, installed with plain npm into
// a project outside the workspace, then imported (ESM and CJS), type-checked (node10, node16,
// bundler) and run: the README's Express quickstart against the reference service's own command.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshProject, outside, readmeBlock, root, run, type FreshProject } from './fresh-project.js';

const VITEST_ONLY = ['@payhook/testing/store', '@payhook/testing/ledger'];
const fixtures = join(import.meta.dirname, 'fixtures');
let project: FreshProject;
const children: ChildProcess[] = [];

beforeAll(async () => {
  project = await freshProject();
  for (const f of ['probe.mjs', 'probe.cjs', 'orders.mts']) copyFileSync(join(fixtures, f), join(project.dir, f));
}, 300_000);
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('release check: the packed packages', () => {
  it('packs every package with no workspace: range left, with its README, LICENSE and metadata', () => {
    const names = project.packages.map((p) => p.manifest.name).sort();
    expect(names).toEqual([
      '@payhook/board',
      '@payhook/client',
      '@payhook/core',
      '@payhook/express',
      '@payhook/fastify',
      '@payhook/hono',
      '@payhook/next',
      '@payhook/queue-bullmq',
      '@payhook/queue-pg-boss',
      '@payhook/reference',
      '@payhook/store-durable-object',
      '@payhook/store-dynamodb',
      '@payhook/store-postgres',
      '@payhook/store-redis',
      '@payhook/store-sqlite',
      '@payhook/store-upstash',
      '@payhook/testing',
    ]);
    for (const { manifest, files } of project.packages) {
      expect(JSON.stringify(manifest), manifest.name).not.toContain('workspace:');
      expect(files, manifest.name).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json']));
      expect(manifest, manifest.name).toMatchObject({ license: 'MIT', repository: { url: 'git+https://github.com/payhook/payhook.git' } });
      expect(manifest.keywords, manifest.name).toContain('webhooks');
      for (const range of Object.values((manifest.dependencies ?? {}) as Record<string, string>))
        expect(range, manifest.name).toMatch(/^\^/);
      for (const bin of Object.values((manifest.bin ?? {}) as Record<string, string>))
        expect(files, manifest.name).toContain(bin.replace(/^\.\//, ''));
      expect(
        files.filter((f) => f.startsWith('src/') || f.startsWith('test/')),
        manifest.name,
      ).toEqual([]);
    }
    const reference = project.packages.find((p) => p.manifest.name === '@payhook/reference')!;
    // Its command is ESM only (bin/payhook-reference.mjs imports dist/cli.js): no CommonJS copy ships.
    expect(reference.files.filter((f) => f.startsWith('dist/cli')).sort()).toEqual(['dist/cli.js', 'dist/cli.js.map']);
  });

  it('installs with every dependency and peer satisfied (npm ls)', async () => {
    // npm ls exits non-zero on a missing or unsatisfied dependency, peers included.
    const { stdout } = await run('npm', ['ls', '--all', '--json'], { cwd: project.dir, env: outside, maxBuffer: 64 * 1024 * 1024 });
    const tree = JSON.parse(stdout) as { dependencies: Record<string, { version: string }> };
    for (const { manifest } of project.packages) expect(tree.dependencies[manifest.name]?.version).toBe(manifest.version);
  });

  it.each(['probe.mjs', 'probe.cjs'])('loads every entry with %s, each with exports', async (probe) => {
    // The conformance suites import vitest, which refuses require(): CommonJS apps cannot use them.
    const entries = probe === 'probe.cjs' ? project.entries.filter((e) => !VITEST_ONLY.includes(e)) : project.entries;
    const { stdout } = await run(process.execPath, [probe, ...entries], { cwd: project.dir, env: outside });
    const found = JSON.parse(stdout) as Record<string, string[]>;
    expect(Object.keys(found).sort()).toEqual(entries);
    for (const entry of entries) expect(found[entry]!.length, entry).toBeGreaterThan(0);
    expect(found['@payhook/core']).toEqual(expect.arrayContaining(['createReceiver', 'memoryStore', 'verifySignature']));
    expect(found['@payhook/core/node']).toContain('toNodeListener');
    // The doors of issue 32: store authors, the service's tables, adapters (the Node half under the node condition).
    expect(found['@payhook/core/store']).toEqual(expect.arrayContaining(['ledgerSettings', 'DEFAULT_RETENTION_MS', 'systemClock']));
    expect(found['@payhook/core/lifecycle']).toEqual(expect.arrayContaining(['TRANSITIONS', 'OUTCOMES', 'paymentEventSchema']));
    expect(found['@payhook/core/adapter']).toEqual(expect.arrayContaining(['adapterOf', 'nodeBridge', 'nodeBridgeFor']));
  });

  // The lowest TypeScript the README names (5.0: 4.9 cannot read `const` type parameters) and npm's latest (7).
  it.each([
    ['node10', '5.0', { module: 'commonjs', moduleResolution: 'node10' }, ['check.ts']],
    ['node16', '5.0', { module: 'node16', moduleResolution: 'node16' }, ['check.cts', 'check.mts']],
    ['bundler', '5.0', { module: 'esnext', moduleResolution: 'bundler' }, ['check.ts']],
    // TypeScript 7 no longer has node10 resolution.
    ['node16', '7', { module: 'node16', moduleResolution: 'node16' }, ['check.cts', 'check.mts']],
    ['bundler', '7', { module: 'esnext', moduleResolution: 'bundler' }, ['check.ts']],
  ] as const)('type-checks every entry under moduleResolution %s with TypeScript %s', async (profile, ts, options, files) => {
    const source = typeCheckSource(await exportNames());
    const dir = join(project.dir, `types-${profile}-${ts}`);
    mkdirSync(dir, { recursive: true });
    for (const file of files) writeFileSync(join(dir, file), source);
    const compilerOptions = { ...options, target: 'es2022', strict: true, noEmit: true, types: ['node'], skipLibCheck: true };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }));
    // Each under an alias whose `tsc` keeps its own path: TypeScript 7's is a native binary behind the same bin name.
    const tsc = join(project.dir, `node_modules/${ts === '7' ? 'typescript7' : 'typescript-lowest'}/bin/tsc`);
    const result = await run(process.execPath, [tsc, '-p', dir], { cwd: project.dir, env: outside }).catch(
      (error: { stdout: string }) => error,
    );
    expect(result.stdout).toBe('');
    // The right compiler ran.
    const { stdout: version } = await run(process.execPath, [tsc, '--version'], { cwd: project.dir, env: outside });
    expect(version).toMatch(ts === '7' ? /^Version 7\./ : /^Version 5\.0\./);
  });
});

describe('release check: publishing', () => {
  it('pnpm publish -r --dry-run would publish every package, at its version', async () => {
    const { stdout } = await run(join(root, 'node_modules/.bin/pnpm'), ['publish', '-r', '--dry-run', '--no-git-checks'], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
    });
    const published = [...stdout.matchAll(/^\+ (@payhook\/[\w-]+)@(\S+)$/gm)].map((m) => `${m[1]}@${m[2]}`).sort();
    expect(published).toEqual(project.packages.map(({ manifest }) => `${manifest.name}@${manifest.version}`).sort());
  }, 120_000);
});

let exportsOfEntries: Promise<Record<string, string[]>> | undefined;
/** Every entry's export names as an ESM app sees them: probed once, for the three type-checks. */
function exportNames(): Promise<Record<string, string[]>> {
  exportsOfEntries ??= run(process.execPath, ['probe.mjs', ...project.entries], { cwd: project.dir, env: outside }).then((r) =>
    JSON.parse(r.stdout),
  );
  return exportsOfEntries;
}

/**
 * Imports every entry and asserts that one export of each is typed (not `any`): an entry whose
 * types do not resolve is TS2307 in this file, one whose types degrade silently fails the check.
 */
function typeCheckSource(exportsOf: Record<string, string[]>): string {
  const lines = ['type IsAny<T> = 0 extends 1 & T ? true : false;'];
  Object.entries(exportsOf).forEach(([entry, names], i) => {
    const name = names.find((n) => n !== 'default')!;
    lines.push(`import * as m${i} from '${entry}';`, `export const typed${i}: IsAny<typeof m${i}.${name}> = false;`);
  });
  return `${lines.join('\n')}\n`;
}

describe("release check: the README's Express quickstart, installed from the tarballs", () => {
  it('receives a payment from `payhook-reference serve` once, and answers its resend as a duplicate', async () => {
    const secret = 'whsec_release_check_secret';
    const apiKey = 'sk_test_release_check_0001';
    // The README's block as written; the app's `orders` and a line saying which port it got.
    const app = [
      "import { orders } from './orders.mjs';",
      readmeBlock('### Express'),
      "server.on('listening', () => console.log(JSON.stringify({ port: (server.address() as { port: number }).port })));",
    ].join('\n');
    writeFileSync(join(project.dir, 'quickstart.mts'), app);
    const compilerOptions = {
      module: 'node16',
      moduleResolution: 'node16',
      target: 'es2022',
      strict: true,
      outDir: 'out',
      types: ['node'],
      skipLibCheck: true,
    };
    writeFileSync(join(project.dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['quickstart.mts', 'orders.mts'] }));
    const built = await run(join(project.dir, 'node_modules/.bin/tsc'), ['-p', '.'], { cwd: project.dir, env: outside }).catch(
      (error: { stdout: string }) => error,
    );
    expect(built.stdout).toBe('');

    const shop = start(process.execPath, ['out/quickstart.mjs'], { PORT: '0', PAYHOOK_WEBHOOK_SECRET: secret });
    const { port } = JSON.parse(await shop.line((l) => l.startsWith('{"port"'))) as { port: number };
    const service = start(join(project.dir, 'node_modules/.bin/payhook-reference'), [
      'serve',
      '--port',
      '0',
      '--api-key',
      apiKey,
      '--webhook-secret',
      secret,
      '--callback-url',
      `http://127.0.0.1:${port}/webhooks`,
      '--allow-http-callbacks',
    ]);
    const url = /listening on (\S+)/.exec(await service.line((l) => l.includes('listening on')))![1]!;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
      return res.json() as Promise<any>;
    };

    const input = { amount: '250.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference: 'order-42' };
    const { reference } = await call('POST', '/v1/transactions/initialize', input);
    await call('POST', `/_sandbox/transactions/${reference}/pay`);
    expect(JSON.parse(await shop.line((l) => l.includes('markPaid')))).toEqual({ markPaid: 'order-42' });

    expect(await service.line((l) => l.includes(`payment.success ${reference}`))).toMatch(/→ 200 in \d+ ms, delivered/);
    const [first] = (await call('GET', `/_sandbox/deliveries?reference=${reference}`)) as Array<{
      id: string;
      state: string;
      attempts: Array<{ status: number }>;
    }>;
    expect(first).toMatchObject({ state: 'delivered', attempts: [{ status: 200 }] });
    const resent = (await call('POST', `/_sandbox/deliveries/${first!.id}/resend`)) as { id: string };
    // The live log prints a line once the resent delivery's attempt was answered.
    expect(await service.line((l) => l.includes(` ${resent.id} attempt 1/`))).toMatch(/→ 200 in \d+ ms, delivered/);
    const again = await call('GET', `/_sandbox/deliveries/${resent.id}`);
    expect(again).toMatchObject({ state: 'delivered', attempts: [{ status: 200 }] });
    expect(again.attempts[0].responseBody).toContain('duplicate');
    expect(shop.lines.filter((l) => l.includes('markPaid'))).toHaveLength(1);
  }, 60_000);
});

/** A child process in the fresh project, its stdout read line by line. */
function start(command: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(command, args, { cwd: project.dir, env: { ...outside, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines: string[] = [];
  const waiting: Array<{ test: (l: string) => boolean; resolve: (l: string) => void }> = [];
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of waiting.splice(0)) w.test(line) ? w.resolve(line) : waiting.push(w);
  });
  const line = (test: (l: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find(test);
      if (seen !== undefined) return resolve(seen);
      waiting.push({ test, resolve });
      child.once('exit', (code) => reject(new Error(`${command} exited (${code}) before the line came:\n${lines.join('\n')}\n${stderr}`)));
    });
  return { child, lines, line };
}

describe('release check: docs/guides/testing/README.md, as a plain .mjs test on Node 20', () => {
  it('runs the reference-service example with plain node, from the tarballs', async () => {
    copyFileSync(join(root, 'docs/snippets/testing-reference.mjs'), join(project.dir, 'testing-reference.mjs'));
    const { stdout } = await run(process.execPath, ['testing-reference.mjs'], { cwd: project.dir, env: outside, timeout: 60_000 });
    expect(stdout).toMatch(/testing-reference: ok \(5 deliveries, handler ran 1 time\)/);
  }, 90_000);
});

// The app loads what it uses (issue 54): a fresh Node process that imports the BUILT @payhook/core
// (packages/core/dist, as `pnpm build` leaves it) and answers one signed delivery with a plain
// receiver loads none of the ledger (its writer, the memory store's ledger), the ordering guard, the reconciler, the diagnosis of refusals,
// dead-letter retries, erasure, OpenTelemetry or zod; each is loaded once its option asks for it.
// Every file the process loads is recorded by a load hook (fixtures/loads.mjs) and searched for
// each part's markers: the module comment esbuild writes above a module's code (rollup, which
// regroups the ESM build, keeps it), and a text of the code itself. A part that is loaded must
// show every one of its markers, so a marker that went stale fails the test as surely as a part
// loaded too early.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createEvents } from '@payhook/testing';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixtures = join(import.meta.dirname, 'fixtures');
const dist = join(root, 'packages/core/dist');
const run = promisify(execFile);

/** Each part loaded on demand: markers searched for in the text of the files loaded, and in their paths. */
const PARTS: Record<string, { text?: string[]; path?: RegExp }> = {
  diagnosis: { text: ['// src/observing/diagnose.ts', 'DIAGNOSE_MAX_DEPTH'] },
  guard: { text: ['// src/steps/order-guard.ts', 'the guard stops waiting rather than lose the event'] },
  ledgerWriter: { text: ['// src/ledger/ledger-writer.ts', 'the ledger fell '] },
  memoryLedger: { text: ['// src/storage/memory-ledger.ts', 'a record needs an id and a receivedAt'] },
  replay: { text: ['// src/ledger/replay.ts', 'has no body to replay'] },
  retry: { text: ['// src/ledger/retry-letters.ts', 'is not a dead letter in the ledger'] },
  erase: { text: ['// src/ledger/erase-records.ts', 'eraseDeliveries needs a reference'] },
  reconciler: { text: ['// src/reconcile/reconcile-run.ts', 'result.scanned += 1'] },
  // The entry's own module comment is not kept (rollup drops it with the imports above it): two of its texts.
  otel: { text: ['payhook.answer.duration', 'payhook.late_outcomes'], path: /[\\/]@opentelemetry[\\/]api[\\/]/ },
  zod: { path: /[\\/]zod[\\/]/ },
};

const secret = 'whsec_loads_what_it_uses';
const [success, refunded] = createEvents(['payment.success', 'payment.refunded']);
const input = JSON.stringify({ secret, success: JSON.stringify(success), refunded: JSON.stringify(refunded) });
const work = mkdtempSync(join(tmpdir(), 'payhook-loads-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Step {
  name: string;
  /** Every file loaded from the start of the process to the end of this step. */
  files: string[];
  /** The parts whose markers those files show. */
  parts: string[];
}

/** Runs fixtures/loads.mjs's scenario in a fresh process: its answers, and what was loaded by the end of each step. */
async function scenario(name: string): Promise<{ answers: string[]; steps: Step[] }> {
  const out = join(work, `${name}.txt`);
  const { stdout } = await run(process.execPath, [join(fixtures, 'loads.mjs'), name], {
    cwd: root,
    env: { ...process.env, LOADS_OUT: out, LOADS_INPUT: input },
  });
  const steps: Step[] = [];
  const files: string[] = [];
  for (const line of readFileSync(out, 'utf8').split('\n').filter(Boolean)) {
    if (!line.startsWith('#')) files.push(fileURLToPath(line));
    else steps.push({ name: line.slice(1), files: [...files], parts: partsIn(files) });
  }
  return { answers: JSON.parse(stdout) as string[], steps };
}

const texts = new Map<string, string>();
const textOf = (file: string) => texts.get(file) ?? texts.set(file, readFileSync(file, 'utf8')).get(file)!;

/** The parts the files show; a part with some markers but not all is a stale marker, and throws. */
function partsIn(files: string[]): string[] {
  const found: string[] = [];
  for (const [part, { text = [], path }] of Object.entries(PARTS)) {
    const markers = [
      ...text.map((t) => files.some((f) => f.startsWith(dist) && textOf(f).includes(t))),
      ...(path ? [files.some((f) => path.test(f))] : []),
    ];
    if (markers.every(Boolean)) found.push(part);
    else if (markers.some(Boolean)) throw new Error(`the markers of ${part} disagree (${JSON.stringify(markers)}): update PARTS`);
  }
  return found;
}

const partsBy = (steps: Step[]) => Object.fromEntries(steps.map((s) => [s.name, s.parts]));

describe('the built @payhook/core loads what the app uses', () => {
  it('is built', () => {
    expect(existsSync(join(dist, 'index.js')), 'packages/core/dist is missing: run `pnpm --filter @payhook/core build`').toBe(true);
  });

  it('a plain receiver answers a signed delivery with none of the parts loaded; a refusal loads the diagnosis, and only it', async () => {
    const { answers, steps } = await scenario('plain');
    expect(answers).toEqual(['200 processed', 'ran 1', '401 unauthorized']);
    expect(partsBy(steps)).toEqual({ root: [], delivered: [], refused: ['diagnosis'] });
    const delivered = steps.find((s) => s.name === 'delivered')!.files;
    // Core's own files and what they import: no dependency outside node's builtins and core.
    expect(delivered.filter((f) => !f.startsWith(dist))).toEqual([]);
    // In few files (rechunk-esm.mjs): the root, its `core` and `signature` chunks and the platform
    // module. esbuild's own split made this 20, and each file is a cold start's time to resolve and link.
    expect(delivered.map((f) => f.slice(dist.length + 1).replace(/-[\w-]{8}\.js$/, '-*.js')).sort()).toEqual([
      'core-*.js',
      'index.js',
      'platform/node-apis.js',
      'signature-*.js',
    ]);
  });

  it('`ordering` loads the guard at the first event that has earlier events to wait for, and not before', async () => {
    const { answers, steps } = await scenario('ordering');
    expect(answers).toEqual(['200 ignored', '200 processed']);
    expect(partsBy(steps)).toEqual({ root: [], unordered: [], ordered: ['guard'] });
  });

  it('a store with a ledger loads the writer at the first record; replay, retry and erase each load theirs when called', async () => {
    const { answers, steps } = await scenario('ledger');
    expect(answers).toEqual(['200 processed', 'recorded processed', 'replayed duplicate', 'retried 0', 'erased 2']);
    expect(partsBy(steps)).toEqual({
      root: [],
      recorded: ['ledgerWriter', 'memoryLedger'],
      replayed: ['ledgerWriter', 'memoryLedger', 'replay'],
      retried: ['ledgerWriter', 'memoryLedger', 'replay', 'retry'],
      erased: ['ledgerWriter', 'memoryLedger', 'replay', 'retry', 'erase'],
    });
  });

  it('a reconciler loads its run at its first run, not when created', async () => {
    const { answers, steps } = await scenario('reconciler');
    expect(answers).toEqual(['scanned 0']);
    expect(partsBy(steps)).toEqual({ root: [], created: [], ran: ['reconciler'] });
  });

  it("OpenTelemetry is loaded by its own entry, @payhook/core/otel, and zod by the REST contract's, @payhook/core/api", async () => {
    const { answers, steps } = await scenario('entries');
    expect(answers).toEqual(['200 ignored']);
    expect(partsBy(steps)).toEqual({ root: [], otel: ['otel'], api: ['otel', 'zod'] });
  });

  it('the CommonJS build runs every part on demand through require()', async () => {
    const { stdout } = await run(process.execPath, [join(fixtures, 'loads.cjs')], {
      cwd: root,
      env: { ...process.env, LOADS_INPUT: input },
    });
    const { answers, required } = JSON.parse(stdout) as { answers: string[]; required: string[] };
    expect(answers).toEqual([
      '200 processed',
      '401 unauthorized',
      '200 processed',
      '200 processed',
      'replayed duplicate',
      'retried 0',
      'erased 2',
      'scanned 0',
    ]);
    // One file and the platform's: the parts live inside index.cjs, initialised when first used.
    expect(required.map((f) => f.slice(dist.length + 1)).sort()).toEqual(['index.cjs', 'platform/node-apis.cjs']);
  });
});

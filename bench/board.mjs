// The board's first view over a big ledger (issue 36): 100,000 records in a Postgres ledger, then
// a board made as an app makes it at start (its own pool), and the time each page takes to answer
// through `board.fetch`: the very first request (a new connection, a cold JIT), then BENCH_BOARD_RUNS
// (20) more of each page, p50 and worst. Prints a markdown table and JSON; writes nothing.
//
//   npx -y pnpm@10.34.8 build && node bench/board.mjs            (DATABASE_URL as for the tests)
//   BENCH_BOARD_RECORDS=1000000 node bench/board.mjs
//
// The records are appended through the ledger itself, in batches of 1,000, spread over the last six
// days: mostly processed payments with their bodies kept (about 600 bytes), a copy answered
// duplicate every tenth, a refusal every fiftieth (kept as a hash), and a dead letter every 500th.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { payloadFor } from './lib/payload.mjs';
import { root } from './lib/report.mjs';

const load = (pkg, file) => import(pathToFileURL(path.join(root, 'packages', pkg, 'dist', file)).href);
const core = await load('core', 'index.js');
const { postgresStore } = await load('store-postgres', 'index.js');
const { createBoard } = await load('board', 'index.js');

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RECORDS = Number(process.env.BENCH_BOARD_RECORDS ?? 100_000);
const RUNS = Number(process.env.BENCH_BOARD_RUNS ?? 20);
const TABLE = 'payhook_bench_board';
const DAY = 86_400_000;
const ledgerOptions = { maxEntries: RECORDS * 2, maxRefusals: RECORDS };

const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
await admin.query(`DROP TABLE IF EXISTS ${TABLE}, ${TABLE}_ledger`);

// Fill the ledger through its own append.
const filler = postgresStore({ connectionString: DATABASE_URL, table: TABLE, ledger: ledgerOptions });
const now = Date.now();
const start = now - 6 * DAY;
const id = (t, i) => `${t.toString(36).padStart(11, '0')}-${(i % 1296).toString(36).padStart(4, '0')}-benchbrd`;
const filled = performance.now();
for (let at = 0; at < RECORDS; at += 1000) {
  const batch = [];
  for (let i = at; i < Math.min(RECORDS, at + 1000); i++) {
    const receivedAt = start + Math.floor((i / RECORDS) * 6 * DAY);
    const payload = payloadFor(i % 20_000);
    const body = JSON.stringify(payload);
    const refused = i % 50 === 49;
    const copy = i % 10 === 9;
    const dead = i % 500 === 499;
    batch.push({
      id: id(receivedAt, i),
      receivedAt,
      source: 'webhook',
      reference: payload.reference,
      event: payload.event,
      dedupeKey: `${payload.reference}:${payload.event}`,
      outcome: refused ? 'unauthorized' : dead ? 'rejected' : copy ? 'duplicate' : 'processed',
      status: refused ? 401 : 200,
      durationMs: 3 + (i % 7),
      ...(refused ? {} : { attempt: copy ? 2 : 1, secretIndex: 0 }),
      signature: refused ? 'invalid' : 'valid',
      signatureHeader: 'sha256=00',
      ...(refused ? { bodySha256: '0'.repeat(64), bodyPrefix: body.slice(0, 64) } : { body, bodyEncoding: 'utf8' }),
      ...(dead ? { error: 'order unknown', deadLetter: { reason: 'rejected', at: receivedAt } } : {}),
    });
  }
  await filler.ledger.append(batch);
}
const fillSeconds = (performance.now() - filled) / 1000;
await filler.close();
const count = Number((await admin.query(`SELECT count(*)::int AS n FROM ${TABLE}_ledger`)).rows[0].n);
console.error(`[bench board] ${count} records in ${fillSeconds.toFixed(1)} s`);

// The app starts: a store of its own, a receiver, the board.
const store = postgresStore({ connectionString: DATABASE_URL, table: TABLE, ledger: ledgerOptions });
const receiver = core.createReceiver({ secret: 'whsec_bench_board', store, logger: () => {} });
const board = createBoard({ receiver, basePath: '/board', authorize: () => ({ user: 'bench' }) });
const sample = (await store.ledger.list({ limit: 20, before: id(now - 3 * DAY, 0) })).find((e) => e.body !== undefined);
const pages = {
  'the list (first view)': '/board/',
  'one delivery': `/board/deliveries/${sample.id}`,
  'filter: reference': `/board/?reference=${sample.reference}`,
  'filter: outcome duplicate': '/board/?outcome=duplicate',
  'filter: open dead letters': '/board/?dead=open',
  'filter: a day ago': `/board/?until=${new Date(now - DAY).toISOString().slice(0, 19)}`,
  'the chart (its own request)': '/board/chart.svg',
  'filter: merchant reference (reads bodies)': `/board/?merchant=${JSON.parse(sample.body).merchantReference}`,
};
const time = async (url) => {
  const t0 = performance.now();
  const r = await board.fetch(new Request(`http://127.0.0.1${url}`));
  await r.text();
  if (r.status !== 200) throw new Error(`[bench board] ${url} answered ${r.status}`);
  return performance.now() - t0;
};
const first = await time(pages['the list (first view)']);
const rows = [];
for (const [name, url] of Object.entries(pages)) {
  const times = [];
  for (let i = 0; i < RUNS; i++) times.push(await time(url));
  times.sort((a, b) => a - b);
  rows.push({ name, p50: times[Math.floor(RUNS / 2)], worst: times.at(-1) });
}
await store.close();
await admin.query(`DROP TABLE IF EXISTS ${TABLE}, ${TABLE}_ledger`);
await admin.end();

const ms = (x) => `${x.toFixed(1)} ms`;
console.log(`${count.toLocaleString('en-US')} records in the Postgres ledger; Node ${process.version}; ${RUNS} runs of each page\n`);
console.log(`The very first request (a new pool, a cold JIT): **${ms(first)}**\n`);
console.log('| page | p50 | worst |\n|---|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${ms(r.p50)} | ${ms(r.worst)} |`);
console.log(JSON.stringify({ records: count, fillSeconds, first, rows }));

// Where core's pipeline spends its time: a V8 CPU profile of `process` in a loop, in this process
// (node:inspector), self time grouped by what it is spent on. For bench/core.mjs, when a target is
// missed (or BENCH_PROFILE=1). BENCH_DEBUG_PROFILE=1 prints the functions behind "core" and "other".
import { Session } from 'node:inspector';

export const GROUPS = {
  hmac: 'HMAC-SHA256, timingSafeEqual and the header hex decode (node:crypto, Buffer)',
  coreSig: "core's signature code around the HMAC (header checks, key choice)",
  parse: 'parse step: `parseEvent` with the builtins it calls (JSON.parse)',
  decode: 'UTF-8 decode (TextDecoder)',
  walk: 'prototype-key walk (`mayHavePrototypeKey`)',
  shape: 'hand shape check (`checkPaymentEvent` and its regexes)',
  sjson: 'secure-json-parse (only for suspect payloads)',
  zod: 'zod (only for the error of a misshapen payload)',
  lru: 'the LRU (base/lru.ts: memory store get/set/evict)',
  store: "memory store's own code (claim, complete)",
  timers: 'timers (deadline queue, setTimeout)',
  gc: 'garbage collection',
  core: "payhook core's other code (intake, claim-and-run, router, report, result)",
  bench: 'the benchmark loop',
  other: 'other (V8 runtime, promise machinery not attributed)',
};

const SIG = [
  'prepare',
  'fromHex',
  'nibble',
  'toBytes',
  'outcome',
  'equalConstantTime',
  'verifySignature',
  'createVerifier',
  'nodeCrypto',
  'requireNodeCrypto',
];
const SHAPE = ['checkPaymentEvent', 'checkCustomer', 'isPlain', 'received', 'text', 'filled', 'money', 'timestamp', 'mode', 'isObject'];
const STORE = ['claim', 'complete', 'held', 'memoryStore', 'release', 'extend'];

function classify({ url, functionName: fn }, coreUrl) {
  if (fn === '(idle)' || fn === '(program)') return null;
  if (fn === '(garbage collector)') return GROUPS.gc;
  // The shape check's regexes (MONEY, CURRENCY, TIMESTAMP); zod runs them only on the error path.
  if (fn.startsWith('RegExp: ^\\d{1,9}') || fn.startsWith('RegExp: ^[A-Z]{3}') || fn.startsWith('RegExp: ^(?:(?:\\d\\d'))
    return GROUPS.shape;
  if (fn.startsWith('RegExp: [A-F]')) return GROUPS.coreSig;
  if (url.includes('zod')) return GROUPS.zod;
  if (url.includes('lru-cache') || /\/lru\.(ts|js)$/.test(url)) return GROUPS.lru;
  if (url.includes('secure-json-parse')) return GROUPS.sjson;
  if (url.includes('internal/crypto') || url.includes('buffer')) return GROUPS.hmac;
  if (url === '' && ['Hmac', 'init', 'update', 'digest', 'timingSafeEqual', 'hexWrite', 'utf8Write'].includes(fn)) return GROUPS.hmac;
  if (url.includes('timers') || url.includes('priority_queue') || fn === 'getLibuvNow' || fn === 'toggleTimerRef') return GROUPS.timers;
  if (url.includes('internal/encoding') || fn === 'decodeUTF8') return GROUPS.decode;
  if (url.startsWith(coreUrl)) {
    if (SIG.includes(fn)) return GROUPS.coreSig;
    if (fn === 'parseEvent') return GROUPS.parse;
    if (fn === 'mayHavePrototypeKey') return GROUPS.walk;
    if (SHAPE.includes(fn)) return GROUPS.shape;
    if (STORE.includes(fn)) return GROUPS.store;
    if (fn === 'createDeadlines' || fn === 'withinBudget') return GROUPS.timers;
    return GROUPS.core;
  }
  if (url.includes('/bench/')) return GROUPS.bench;
  return GROUPS.other;
}

/**
 * Profile `fn` (async, one delivery per call) for `ms` after a warm-up; shares of self time by
 * group. `coreUrl`: the file URL of the dist directory measured (its code is core's).
 */
export async function profilePipeline(fn, { coreUrl, ms = 2500 }) {
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  for (let i = 0; i < 5000; i++) await fn();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  const end = performance.now() + ms;
  while (performance.now() < end) for (let i = 0; i < 500; i++) await fn();
  const { profile } = await post('Profiler.stop');
  session.disconnect();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const groups = new Map();
  const debug = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const { callFrame } = byId.get(profile.samples[i]);
    const dt = profile.timeDeltas[i] ?? 0;
    const g = classify(callFrame, coreUrl);
    if (g === null) continue;
    if (process.env.BENCH_DEBUG_PROFILE && (g === GROUPS.other || g === GROUPS.core)) {
      const k = `${g === GROUPS.other ? 'other' : 'core'} ${callFrame.functionName} ${callFrame.url}:${callFrame.lineNumber + 1}`;
      debug.set(k, (debug.get(k) ?? 0) + dt);
    }
    groups.set(g, (groups.get(g) ?? 0) + dt);
    total += dt;
  }
  for (const [k, t] of [...debug].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.error(((t / total) * 100).toFixed(1).padStart(5) + '%', k);
  return [...groups].map(([group, t]) => ({ group, share: t / total })).sort((x, y) => y.share - x.share);
}

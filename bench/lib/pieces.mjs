// The core pipeline in pieces, each alone on the same payloads, for bench/core.mjs: the steps of
// the common path (verify, decode, JSON.parse, shape check, store) beside what
// they replace or stand on (bare HMAC, secure-json-parse, zod, an empty await).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SECRET, N, STORE_MAX } from './contenders.mjs';

const MASK = N - 1;

/**
 * A function a build of core keeps inside (not exported from its entries), found by name among the
 * exports of its chunks; undefined if no chunk exports it by that name (a build that renamed it).
 */
export async function internalOf(distDir, name) {
  const exportsIt = new RegExp(`export \\{[^}]*\\b${name}\\b`);
  for (const f of readdirSync(distDir).filter((f) => f.endsWith('.js'))) {
    if (!exportsIt.test(readFileSync(path.join(distDir, f), 'utf8'))) continue;
    const m = await import(pathToFileURL(path.join(distDir, f)).href);
    if (typeof m[name] === 'function') return m[name];
  }
  return undefined;
}

/** The piece rows `{ key, label, fn, async }` and `notes` (what could not be measured alone). */
export async function pieceRows({ core, distDir, coreDir, deliveries: d }) {
  const secureJson = createRequire(path.join(coreDir, 'package.json'))('secure-json-parse');
  // Builds before issue 54 had `isPaymentEventShape` (a boolean); since, `checkPaymentEvent` (`{ ok }`).
  const checkEvent = await internalOf(distDir, 'checkPaymentEvent');
  const oldShape = checkEvent ? undefined : await internalOf(distDir, 'isPaymentEventShape');
  const isShape = checkEvent ? (p) => checkEvent(p).ok : oldShape;
  const parsed = d.strings.map((s) => JSON.parse(s));
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const verify = core.createVerifier([SECRET]);
  const store = core.memoryStore({ max: STORE_MAX });
  const keys = parsed.map((e) => `${e.mode}:${e.reference}:${e.event}`);
  let i = 0;
  const k = () => i++ & MASK;

  // Each piece must answer as it does in the pipeline on these payloads, or its time means nothing.
  const check = (what, ok) => {
    if (!ok) throw new Error(`[bench] piece ${what} did not answer as in the pipeline`);
  };
  check('verifier', verify(d.bodies[0], d.signatures[0]).ok === true);
  check('shape', !isShape || parsed.every((p) => isShape(p)));
  check('zod', core.paymentEventSchema.safeParse(parsed[0]).success);

  const rows = [
    {
      key: 'p.verify',
      label: 'core `createVerifier([secret])` call (hex header decode + `/[A-F]/`, HMAC with a Buffer key, timingSafeEqual)',
      fn: () => {
        const j = k();
        return verify(d.bodies[j], d.signatures[j]);
      },
    },
    {
      key: 'p.hmac',
      label: 'bare HMAC + timingSafeEqual, as the floor does it',
      fn: () => {
        const j = k();
        return timingSafeEqual(createHmac('sha256', SECRET).update(d.bodies[j]).digest(), Buffer.from(d.signatures[j].slice(7), 'hex'));
      },
    },
    { key: 'p.decode', label: 'UTF-8 decode: `TextDecoder({ fatal: true })`', fn: () => utf8.decode(d.bodies[k()]) },
    { key: 'p.json', label: '`JSON.parse` (string)', fn: () => JSON.parse(d.strings[k()]) },
    {
      key: 'p.sjson',
      label:
        '`secure-json-parse` (error on proto/constructor; its own JSON.parse included): what the prototype-key walk inside the pipeline replaces (the walk is not exported, so it is measured only as part of the pipeline row)',
      fn: () => secureJson.parse(d.strings[k()], undefined, { protoAction: 'error', constructorAction: 'error' }),
    },
    ...(isShape
      ? [
          {
            key: 'p.shape',
            label: `hand shape check \`${checkEvent ? 'checkPaymentEvent' : 'isPaymentEventShape'}\` (from the dist chunk)`,
            fn: () => isShape(parsed[k()]),
          },
        ]
      : []),
    {
      key: 'p.zod',
      label: 'zod `paymentEventSchema.safeParse`: what the hand check replaces (a receiver no longer loads zod)',
      fn: () => core.paymentEventSchema.safeParse(parsed[k()]),
    },
    {
      key: 'p.store',
      label: 'memory store `await claim` + `await complete` (public async API, LRU evicting)',
      async: true,
      fn: async () => {
        const key = keys[k()];
        const c = await store.claim(key, 30_000);
        return store.complete(key, c.token, { outcome: 'ok' });
      },
    },
    { key: 'p.async', label: 'an empty `async` call awaited (per-await baseline)', async: true, fn: async () => i++ },
  ];
  const notes = isShape
    ? []
    : [
        'The hand shape check is not exported by any chunk of this build, so the hand shape check is not measured alone: it is inside the pipeline row; zod is measured alone.',
      ];
  return { rows, notes, commonPath: ['p.verify', 'p.decode', 'p.json', 'p.shape', 'p.store'] };
}

// The contenders of the core benchmarks, built once here for bench/core.mjs and bench/callgrind.mjs:
// N distinct signed deliveries and, for each contender, a function that handles the next one.
// Every contender's handler does the same trivial work and counts its runs.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Webhooks } from '@octokit/webhooks';
import { payloadFor } from './payload.mjs';

export const SECRET = 'whsec_3f9a1c7e5b2d48f6a0c9e1b7d3f5a2c8';
export const N = 4096; // power of two: index = counter & MASK
const MASK = N - 1;
// < N: a key is evicted (LRU) after 1024 newer keys and comes back after 4095, so every delivery is new.
export const STORE_MAX = 1024;
/** A platform's accounts, in the processAccounts and handleAccounts rows. */
const ACCOUNTS = ['acct_7Q2a', 'acct_9Kd3', 'acct_Z01x'];

/** What each contender is, for the tables; `async`: its function returns a promise to await. */
export const ROWS = {
  process: { label: 'payhook `adapterOf(receiver).process` (Buffer body, memory store)', async: true },
  processOtelNoop: {
    label:
      'payhook `process` with `telemetry: openTelemetry()` (`@payhook/core/otel`, no OpenTelemetry SDK registered: the no-op tracer and meter)',
    async: true,
  },
  processLedger: {
    label: "payhook `process` with the memory store's ledger on (`memoryStore({ ledger: true })`: a record per delivery, body kept)",
    async: true,
  },
  processNoStore: {
    label: 'payhook `process` on a store that does nothing (what deduplication costs: not a configuration to run)',
    async: true,
  },
  processAccounts: {
    label:
      'payhook `process` on a receiver with `accounts` (issue 50): 3 accounts, each delivery for a cached one (the same memory store and bodies as `process`)',
    async: true,
  },
  handleAccounts: {
    label: "payhook `handle` on a receiver with `accounts`: the account read from the Request URL's last segment, cached",
    async: true,
  },
  floor: { label: 'floor: HMAC + timingSafeEqual + JSON.parse (Buffer body)' },
  octokit: { label: '@octokit/webhooks `verifyAndReceive` (string payload)', async: true },
  stripe: { label: 'stripe `webhooks.constructEvent` (Buffer body)' },
  svix: { label: 'svix `new Webhook(secret).verify` (Buffer body)' },
  handle: { label: 'payhook `receiver.handle(new Request(...))`, Response read', async: true },
  webStandard: { label: 'web-standard cost alone: Request built and read, Response built and read', async: true },
};

/** stripe and svix, imported only where they are measured (they are slow to load under valgrind). */
export async function loadPeers() {
  const [{ default: Stripe }, { Webhook }] = await Promise.all([import('stripe'), import('svix')]);
  return { Stripe, Svix: Webhook };
}

/**
 * The `/otel` entry of a build of @payhook/core: the otel.js beside its index.js in `distDir`.
 * `{ file, missing: true }` where the build has none (builds before the otel entry, e.g. 94c9b64):
 * the processOtelNoop row then throws, naming the file. Loading it loads `@opentelemetry/api`.
 */
export async function loadOtel(distDir) {
  const file = path.join(distDir, 'otel.js');
  if (!existsSync(file)) return { file, missing: true };
  return { file, ...(await import(pathToFileURL(file).href)) };
}

/** The deliveries: bytes as they come off the wire, the same as strings (Octokit only takes strings), signatures, ids. */
export function makeDeliveries() {
  const bodies = [];
  const strings = [];
  const signatures = [];
  const ids = [];
  for (let i = 0; i < N; i++) {
    const text = JSON.stringify(payloadFor(i));
    const buf = Buffer.from(text, 'utf8');
    bodies.push(buf);
    strings.push(text);
    signatures.push('sha256=' + createHmac('sha256', SECRET).update(buf).digest('hex'));
    ids.push(randomUUID());
  }
  return { bodies, strings, signatures, ids };
}

/**
 * The contenders over one set of deliveries. `core` is the root entry of a build of @payhook/core,
 * `adapter` its `/adapter` entry, `otel` what loadOtel() returns for the same build (for
 * processOtelNoop only), `peers` what loadPeers() returns (for stripe and svix only).
 * Each maker returns `() => result` (a promise for async ones).
 */
export function makeContenders({ core, adapter, otel, peers }, d = makeDeliveries()) {
  const counts = {};
  let sink = 0;
  const handlerFor = (name, unwrap = false) => {
    counts[name] = { calls: 0, handled: 0 };
    // Octokit hands its handlers `{ id, name, payload }`; the others the event itself.
    return unwrap
      ? ({ payload }) => {
          counts[name].handled++;
          sink += payload.amount.length;
        }
      : (event) => {
          counts[name].handled++;
          sink += event.amount.length;
        };
  };
  const next = (name) => {
    let i = 0;
    return () => {
      counts[name].calls++;
      return i++ & MASK;
    };
  };
  /** The i-th delivery as a web Request, as a runtime would hand it over. */
  const requestFor = (i) =>
    new Request('http://localhost/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': d.signatures[i] },
      body: d.bodies[i],
    });
  const newReceiver = (name, extra = {}, storeOptions = {}) =>
    core
      .createReceiver({ secret: SECRET, store: core.memoryStore({ max: STORE_MAX, ...storeOptions }), ...extra })
      .on('payment.success', handlerFor(name));

  const settings = { secret: SECRET };
  const newPlatform = (name) =>
    core
      .createReceiver({ accounts: { resolve: () => settings }, store: core.memoryStore({ max: STORE_MAX }) })
      .on('payment.success', handlerFor(name));

  const signed = peers && signPeers(peers, d);
  const needPeers = (name) => {
    if (!signed) throw new Error(`[bench] ${name} needs the peers: makeContenders({ core, adapter, peers: await loadPeers() })`);
    return signed;
  };

  return {
    counts,
    sink: () => sink,
    deliveries: d,
    /** Sign the stripe and svix headers afresh (both allow 5 minutes): before every measured phase. */
    resign: () => signed?.resign(),
    /** What any correct receiver must do at least, from the same bytes: HMAC, constant-time compare, JSON.parse. */
    floor(name, input = d.bodies) {
      const handler = handlerFor(name);
      const k = next(name);
      return () => {
        const i = k();
        const body = input[i];
        const header = d.signatures[i];
        const given = Buffer.from(header.slice(7), 'hex');
        const expected = createHmac('sha256', SECRET).update(body).digest();
        if (given.length !== expected.length || !timingSafeEqual(expected, given)) throw new Error('floor: bad signature');
        handler(JSON.parse(typeof body === 'string' ? body : body.toString('utf8')));
      };
    },
    /**
     * `process` on a platform's receiver: three accounts (each with the one secret the bodies are
     * signed with, so the rows verify the same bytes), every delivery for one of them, cached after
     * its first lookup. The difference from `process` is what an account costs a delivery.
     */
    processAccounts(name) {
      const { process } = adapter.adapterOf(newPlatform(name));
      const k = next(name);
      return () => {
        const i = k();
        return process({ method: 'POST', signature: d.signatures[i], body: d.bodies[i], account: ACCOUNTS[i % 3] });
      };
    },
    /** `handle` on a platform's receiver: the account from each Request's path. */
    handleAccounts(name) {
      const receiver = newPlatform(name);
      const k = next(name);
      return async () => {
        const i = k();
        const request = new Request(`http://localhost/webhooks/${ACCOUNTS[i % 3]}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-signature': d.signatures[i] },
          body: d.bodies[i],
        });
        return (await receiver.handle(request)).text();
      };
    },
    /** payhook's pipeline on bytes already read, as the adapters call it. */
    process(name, input = d.bodies) {
      const { process } = adapter.adapterOf(newReceiver(name));
      const k = next(name);
      return () => {
        const i = k();
        return process({ method: 'POST', signature: d.signatures[i], body: input[i] });
      };
    },
    /**
     * `process` exactly, with the ledger on: each delivery's record is written after its answer, by
     * the ledger's writer, and the memory ledger drops the oldest past its 10,000 records.
     */
    processLedger(name, ledger = true) {
      const { process } = adapter.adapterOf(newReceiver(name, {}, { ledger }));
      const k = next(name);
      return () => {
        const i = k();
        return process({ method: 'POST', signature: d.signatures[i], body: d.bodies[i] });
      };
    },
    /**
     * `process` exactly, with `telemetry: openTelemetry()` from the build's own otel.js. No SDK is
     * registered, so `@opentelemetry/api` hands out its no-op tracer and meter: this is what the
     * telemetry path costs before any exporter does work (the spans and metrics are built, then dropped).
     */
    processOtelNoop(name) {
      if (typeof otel?.openTelemetry !== 'function') {
        throw new Error(
          otel?.missing
            ? `[bench] ${name}: ${otel.file} is missing: this build of @payhook/core has no /otel entry (builds before it, such as 94c9b64, have none)`
            : `[bench] ${name} needs the build's otel entry: makeContenders({ core, adapter, otel: await loadOtel(distDir) })`,
        );
      }
      const { process } = adapter.adapterOf(newReceiver(name, { telemetry: otel.openTelemetry() }));
      const k = next(name);
      return () => {
        const i = k();
        return process({ method: 'POST', signature: d.signatures[i], body: d.bodies[i] });
      };
    },
    /**
     * The same pipeline on a store whose synchronous view answers every claim at once and writes
     * nothing: the difference from `process` is the cost of deduplicating (LRU, clock reads, the
     * claim token), which Octokit does not do. It reaches core's internal symbol for that view.
     */
    processNoStore(name) {
      const claimed = { status: 'claimed', token: 't', attempt: 1 };
      const yes = () => true;
      const store = {
        claim: async () => claimed,
        complete: async () => true,
        release: async () => true,
        extend: async () => true,
        get: async () => undefined,
      };
      Object.defineProperty(store, Symbol.for('payhook.store.sync'), {
        value: { claim: () => claimed, complete: yes, release: yes, extend: yes },
      });
      const { process } = adapter.adapterOf(core.createReceiver({ secret: SECRET, store }).on('payment.success', handlerFor(name)));
      const k = next(name);
      return () => {
        const i = k();
        return process({ method: 'POST', signature: d.signatures[i], body: d.bodies[i] });
      };
    },
    /** payhook's web-standard entry, Request in and Response out, the Request built and the Response read. */
    handle(name) {
      const receiver = newReceiver(name);
      const k = next(name);
      return async () => {
        const response = await receiver.handle(requestFor(k()));
        return response.text();
      };
    },
    /** What `handle` costs the platform alone: the same Request built and read, a Response built and read. */
    webStandard(name) {
      const handler = handlerFor(name);
      const k = next(name);
      return async () => {
        const request = requestFor(k());
        handler({ amount: String(request.headers.get('x-service-signature')) });
        // Read as handle reads it (a stream reader, the cheapest way in Node 20), so the net figure is not flattered.
        const reader = request.body.getReader();
        while (!(await reader.read()).done);
        return new Response('{"outcome":"processed"}', { status: 200, headers: { 'content-type': 'application/json' } }).text();
      };
    },
    /** Octokit: `on()` with a name outside GitHub's list only warns (silenced through `log`); it routes on any name. */
    octokit(name) {
      const quiet = { debug() {}, info() {}, warn() {}, error() {} };
      const webhooks = new Webhooks({ secret: SECRET, log: quiet });
      webhooks.on('payment.success', handlerFor(name, true));
      const k = next(name);
      return () => {
        const i = k();
        return webhooks.verifyAndReceive({ id: d.ids[i], name: 'payment.success', payload: d.strings[i], signature: d.signatures[i] });
      };
    },
    /** stripe: `constructEvent(payload, header, secret)`, `t=<unix s>,v1=<hex HMAC of "t.payload">`; takes the Buffer. */
    stripe(name) {
      const handler = handlerFor(name);
      const { stripe, STRIPE_SECRET, stripeHeaders } = needPeers(name);
      const k = next(name);
      return () => {
        const i = k();
        handler(stripe.webhooks.constructEvent(d.bodies[i], stripeHeaders[i], STRIPE_SECRET));
      };
    },
    /** svix: `new Webhook('whsec_<base64>').verify(payload, { svix-id, svix-timestamp, svix-signature })`. */
    svix(name) {
      const handler = handlerFor(name);
      const { svix, svixHeaders } = needPeers(name);
      const k = next(name);
      return () => {
        const i = k();
        handler(svix.verify(d.bodies[i], svixHeaders[i]));
      };
    },
  };
}

function signPeers({ Stripe, Svix }, d) {
  const stripe = new Stripe('sk_test_payhook_bench');
  const STRIPE_SECRET = 'whsec_' + 'b'.repeat(32);
  const svix = new Svix('whsec_' + Buffer.from('payhook-bench-svix-secret-32byte').toString('base64'));
  const stripeHeaders = new Array(N);
  const svixHeaders = new Array(N);
  const resign = () => {
    const t = Math.floor(Date.now() / 1000);
    for (let i = 0; i < N; i++) {
      const id = `msg_${d.ids[i]}`;
      stripeHeaders[i] = stripe.webhooks.generateTestHeaderString({ payload: d.strings[i], secret: STRIPE_SECRET, timestamp: t });
      svixHeaders[i] = { 'svix-id': id, 'svix-timestamp': String(t), 'svix-signature': svix.sign(id, new Date(t * 1000), d.strings[i]) };
    }
  };
  resign();
  return { stripe, STRIPE_SECRET, svix, stripeHeaders, svixHeaders, resign };
}

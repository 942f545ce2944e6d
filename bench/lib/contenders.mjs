// The contenders of the core benchmarks, built once here for bench/core.mjs and bench/callgrind.mjs:
// N distinct signed deliveries and, for each contender, a function that handles the next one.
// Every contender's handler does the same trivial work and counts its runs.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { Webhooks } from '@octokit/webhooks';
import { payloadFor } from './payload.mjs';

export const SECRET = 'whsec_3f9a1c7e5b2d48f6a0c9e1b7d3f5a2c8';
export const N = 4096; // power of two: index = counter & MASK
const MASK = N - 1;
// < N: a key is evicted (LRU) after 1024 newer keys and comes back after 4095, so every delivery is new.
export const STORE_MAX = 1024;

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
 * `adapter` its `/adapter` entry. Each maker returns `() => result` (a promise for async ones).
 */
export function makeContenders({ core, adapter }, d = makeDeliveries()) {
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
  const newReceiver = (name) =>
    core.createReceiver({ secret: SECRET, store: core.memoryStore({ max: STORE_MAX }) }).on('payment.success', handlerFor(name));

  return {
    counts,
    sink: () => sink,
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
    /** payhook's pipeline on bytes already read, as the adapters call it. */
    process(name, input = d.bodies) {
      const { process } = adapter.adapterOf(newReceiver(name));
      const k = next(name);
      return () => {
        const i = k();
        return process({ method: 'POST', signature: d.signatures[i], body: input[i] });
      };
    },
    /** payhook's web-standard entry, Request in and Response out, the Request built and the Response read. */
    handle(name) {
      const receiver = newReceiver(name);
      const k = next(name);
      return async () => {
        const i = k();
        const request = new Request('http://localhost/webhooks', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-signature': d.signatures[i] },
          body: d.bodies[i],
        });
        const response = await receiver.handle(request);
        return response.text();
      };
    },
    /** What `handle` costs the platform alone: the same Request built and read, a Response built and read. */
    webStandard(name) {
      const handler = handlerFor(name);
      const k = next(name);
      return async () => {
        const i = k();
        const request = new Request('http://localhost/webhooks', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-signature': d.signatures[i] },
          body: d.bodies[i],
        });
        handler({ amount: String(request.headers.get('x-service-signature')) });
        await request.arrayBuffer();
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
  };
}

import { describe, expect, it } from 'vitest';

// What a merchant writes against, and nothing a sibling package needs (issue 32): a value added to
// the root is a decision, made here and in the changeset, not a side effect of an export.
const ROOT = [
  'EPAY_SIGNATURE_HEADER',
  'NonRetriableError',
  'SIGNATURE_HEADER',
  'createEventRouter',
  'createReceiver',
  'createReconciler',
  'createVerifier',
  'defaultDedupeKey',
  'eraseDeliveries',
  'memoryStore',
  'retryDeadLetters',
  'sign',
  'signAsync',
  'verifySignature',
  'verifySignatureAsync',
];

describe("core's doors", () => {
  it('the root holds the 15 values a merchant writes against', async () => {
    expect(Object.keys(await import('../src/index.js')).sort()).toEqual(ROOT);
  });

  it('each value lives behind one door: no name is exported by two entries', async () => {
    const doors = {
      root: await import('../src/index.js'),
      store: await import('../src/store.js'),
      lifecycle: await import('../src/lifecycle.js'),
      api: await import('../src/api.js'),
      adapter: await import('../src/adapter.js'),
      node: await import('../src/node.js'),
      queue: await import('../src/queue.js'),
      otel: await import('../src/otel.js'),
    };
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const [door, exports] of Object.entries(doors)) {
      for (const name of Object.keys(exports)) {
        const first = seen.get(name);
        if (first) twice.push(`${name}: ${first} and ${door}`);
        else seen.set(name, door);
      }
    }
    expect(twice).toEqual([]);
  });

  it("the adapter door's Node half differs only by the bridge", async () => {
    const web = await import('../src/adapter.js');
    const node = await import('../src/adapter-node.js');
    expect(Object.keys(node).sort()).toEqual(Object.keys(web).sort());
    expect(web.nodeBridge).toBeNull();
    expect(() => web.nodeBridgeFor('Express')).toThrow(/^\[@payhook\/core\] Express serves Node requests/);
    expect(node.nodeBridgeFor('Express')).toBe(node.nodeBridge);
    expect(Object.keys(node.nodeBridge!).sort()).toEqual(['lingerOnClose', 'processNodeRequest', 'writeNodeResponse']);
  });
});

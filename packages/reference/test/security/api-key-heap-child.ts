/**
 * Child of api-keys.test.ts: builds a reference service from an API key that exists only as bytes
 * here, authenticates with it, then writes a heap snapshot for the parent to search. Prints
 * `{ file, key }` once the snapshot is written.
 */
import { randomBytes } from 'node:crypto';
import { writeHeapSnapshot } from 'node:v8';
import { createReferenceService } from '@payhook/reference';

const raw = randomBytes(24);
// The key as a string is made on demand and never kept by this script.
const key = () => `sk_test_${raw.toString('hex')}`;
const service = createReferenceService({
  clock: 'manual',
  merchants: [{ id: 'heap', apiKeys: [{ key: key() }], webhookSecret: 'whsec_heap_child_secret' }],
  onError: () => {},
});
for (let i = 0; i < 3; i++) {
  const res = await service.fetch(new Request('http://127.0.0.1/v1/transactions', { headers: { authorization: `Bearer ${key()}` } }));
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}`);
  await res.text();
}
// RegExp's legacy statics (RegExp.$1, lastMatch) keep the last matched input alive; move them on.
/x/.exec('x');
(globalThis as { gc?: () => void }).gc?.();
(globalThis as { gc?: () => void }).gc?.();
const file = writeHeapSnapshot(process.argv[2]);
process.stdout.write(JSON.stringify({ file, key: key(), services: [service].length }));

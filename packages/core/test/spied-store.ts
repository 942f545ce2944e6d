import type { ManualClock } from '@payhook/testing';
import { memoryStore, type Store } from '../src/index.js';
import { STORE_SYNC } from '../src/base/shared-keys.js';
import { storeOps, type StoreOps } from '../src/storage/store-contract.js';

/**
 * A memory store on `clock` that records every call the receiver makes of it (`claim@25`), with
 * operations replaced by `replace(its own)`. It keeps the memory store's synchronous view, so the
 * receiver takes the same paths as with the memory store itself.
 */
export function spiedStore(clock: ManualClock, replace: (own: StoreOps) => Partial<StoreOps> = () => ({})) {
  const inner = memoryStore({ now: clock.now, warn: false });
  const own = storeOps(inner);
  const ops: StoreOps = { ...own, ...replace(own) };
  const calls: string[] = [];
  const seen = (name: string) => calls.push(`${name}@${clock.now()}`);
  const view: StoreOps = {
    claim: (k, l) => (seen('claim'), ops.claim(k, l)),
    complete: (k, t, o) => (seen('complete'), ops.complete(k, t, o)),
    release: (k, t) => (seen('release'), ops.release(k, t)),
    extend: (k, t, l) => (seen('extend'), ops.extend(k, t, l)),
  };
  const store: Store = { ...inner };
  Object.defineProperty(store, STORE_SYNC, { value: view });
  return { store, calls };
}

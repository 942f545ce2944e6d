// Every key core shares with other copies of itself, in one list. They are registered symbols
// (`Symbol.for`): the same symbol in every copy of @payhook/core in a process (ESM and CommonJS,
// two versions, a store or adapter package built against another copy), where an `instanceof` or
// a module-level value would see only its own copy. Each is a hidden channel, so each is here,
// with who writes it and who reads it. A key's string never changes: an older copy still reads it.

/** On a `NonRetriableError`. Set by its constructor; read by `isNonRetriableError` (base/errors.ts). */
export const NON_RETRIABLE = Symbol.for('payhook.NonRetriableError');

/**
 * On a receiver, its adapter's view (`adapterOf`). Set by `createReceiver` (running/receiver.ts);
 * read by `adapterOf` (running/adapter-of.ts), which adapter packages call on a receiver another
 * copy of core may have made.
 */
export const ADAPTER = Symbol.for('payhook.receiver.adapter');

/**
 * On a store, its synchronous operations, not enumerable. Set by the memory store; read by
 * `storeOps` (storage/store-contract.ts), so a receiver runs a delivery on it without awaiting.
 */
export const STORE_SYNC: unique symbol = Symbol.for('payhook.store.sync') as never;

/**
 * On a handler that can take its event's claim inside its own transaction (`ClaimInside`). Set by
 * the queue handoff (routing/handoff.ts) and by store and queue packages (Postgres, pg-boss);
 * read by the claim step (steps/claim/claim-inside.ts).
 */
export const CLAIM_INSIDE: unique symbol = Symbol.for('payhook.claim-inside') as never;

/**
 * On a memory store, not enumerable: the copy of core that made it, and whether it may warn. Set
 * by `memoryStore`; read by the warning about memory stores (storage/memory-store-warning.ts).
 */
export const MEMORY_STORE = Symbol.for('payhook.memoryStore');

/**
 * On `globalThis`: the copies of core whose memory stores are in use, and the warnings already
 * given, shared by every copy whatever its version (storage/memory-store-warning.ts).
 */
export const MEMORY_STORE_REGISTRY = Symbol.for('payhook.memoryStore.registry.v1');

/**
 * On a memory ledger (the real one, and the store's stand-in while it loads), not enumerable.
 * Set and read by storage/memory-ledger-mark.ts: the `payhook` command tells one by it.
 */
export const MEMORY_LEDGER = Symbol.for('payhook.memoryLedger');

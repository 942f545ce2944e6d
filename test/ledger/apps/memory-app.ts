/**
 * A merchant's webhook module whose store keeps its ledger in memory (`--app
 * test/ledger/apps/memory-app.ts`): the ledger lives in the app's process, and the `payhook` command,
 * in a process of its own, cannot read it.
 */
import { createReceiver, memoryStore } from '@payhook/core';

export const receiver = createReceiver({ secret: 'whsec_memory_app', store: memoryStore({ ledger: true }), logger: () => {} });

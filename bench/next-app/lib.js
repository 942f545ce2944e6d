// Shared by the routes; one module instance per `next start` process (globalThis keeps it across route bundles).
import { createReceiver, memoryStore } from '@payhook/core';
import { SECRET, STORE_MAX, counts, handle } from '../http/shared.mjs';

const g = globalThis;
g.__payhookBench ??= { counts, handle };
export const benchCounts = g.__payhookBench.counts;
export const benchHandle = g.__payhookBench.handle;
g.__payhookBenchReceiver ??= createReceiver({ secret: SECRET, store: memoryStore({ max: STORE_MAX }), logger: { warn() {} } }).onAny(
  (event) => {
    benchHandle('payhook', event);
  },
);
export const receiver = g.__payhookBenchReceiver;

import { memoryStore } from '@payhook/core';
import { storeConformance } from '@payhook/testing/store';

// A virtual clock: the lease expiry and retention tests move it instead of sleeping.
let now = Date.now();
storeConformance('memory', {
  make: () => memoryStore({ now: () => now }),
  shared: false,
  advance: (ms) => {
    now += ms;
  },
});

// A serverless platform's request context, as Vercel gives one to Next: Next 15+ reads
// `globalThis[Symbol.for('@next/request-context')].get().waitUntil` and hands it the work that
// `after()` is given (Edge routes included, through their sandbox). Loaded into `next start` with
// `--require` by test/runtimes/next.test.ts; the app's /platform route reads what it was handed.
'use strict';

/** Each promise handed to waitUntil: when it was handed over and when it settled (Date.now()). */
const held = [];
globalThis[Symbol.for('payhook.matrix.platform')] = held;

const context = {
  waitUntil(work) {
    const entry = { givenAt: Date.now(), settledAt: null };
    held.push(entry);
    const settle = () => {
      entry.settledAt = Date.now();
    };
    Promise.resolve(work).then(settle, settle);
  },
};
globalThis[Symbol.for('@next/request-context')] = { get: () => context };

// The app every runtime in the matrix serves, in plain JavaScript so that each runtime loads it as
// it is (Node 20.0, Bun, Deno, a Worker bundle, a Next route). The cases it answers are in ../cases.ts.
import { createReceiver } from '@payhook/core';
import { upstashStore } from '@payhook/store-upstash';

export const MATRIX_SECRET = 'whsec_runtime_matrix';
export const MATRIX_BUDGET_MS = 300;
/** The budget of the receivers on a shared store (the Upstash and Durable Object rows). */
export const SHARED_STORE_BUDGET_MS = 5_000;
/** Longer than the budget: a delivery whose merchantReference starts with `slow-` is answered 202 first. */
export const SLOW_HANDLER_MS = 1_000;

/** A platform's merchant accounts and their webhook secrets (the receiver with `accounts`). */
export const PLATFORM_SECRETS = { acct_A: `${MATRIX_SECRET}_a`, acct_B: `${MATRIX_SECRET}_b` };
/** The receiver options of a platform: many accounts, the account in the path's last segment. */
export const platformAccounts = {
  secret: undefined,
  accounts: { resolve: (name) => (Object.hasOwn(PLATFORM_SECRETS, name) ? { secret: PLATFORM_SECRETS[name] } : undefined) },
};

const silent = { info() {}, warn() {}, error() {} };

/**
 * A receiver whose `payment.success` handler counts its runs per reference (started, finished,
 * and when it last finished, by Date.now()).
 * Extra receiver options (a `store`, `afterBudget`) pass through.
 */
export function matrixReceiver(options = {}) {
  const runs = new Map();
  const receiver = createReceiver({ secret: MATRIX_SECRET, budgetMs: MATRIX_BUDGET_MS, logger: silent, ...options }).on(
    'payment.success',
    async (event) => {
      const run = runs.get(event.reference) ?? { started: 0, finished: 0 };
      runs.set(event.reference, run);
      run.started++;
      if (event.merchantReference.startsWith('slow-')) await new Promise((resolve) => setTimeout(resolve, SLOW_HANDLER_MS));
      run.finished++;
      run.finishedAt = Date.now();
    },
  );
  return { receiver, runs };
}

/**
 * The receiver options for the shared-store rows: an Upstash store when `env` names one
 * (PAYHOOK_UPSTASH_URL and PAYHOOK_UPSTASH_TOKEN: the test's REST bridge), else none (memory).
 */
export function upstashFrom(env) {
  const url = env.PAYHOOK_UPSTASH_URL;
  if (!url) return {};
  // A budget of seconds, as in production: the 300 ms one is for the late-handler cases, and on a
  // busy machine a first request through the bridge can take longer, answered 503 `deferred`.
  return { store: upstashStore({ url, token: env.PAYHOOK_UPSTASH_TOKEN, prefix: 'payhook-matrix:' }), budgetMs: SHARED_STORE_BUDGET_MS };
}

/** `GET …/runs?reference=R&key=K`: what the handler did for R, and the store's record of key K. */
export async function runsAnswer(app, url) {
  const reference = url.searchParams.get('reference') ?? '';
  const key = url.searchParams.get('key') ?? '';
  const run = app.runs.get(reference) ?? { started: 0, finished: 0 };
  const record = (await app.receiver.store.get(key)) ?? null;
  return Response.json({ ...run, record });
}

/**
 * A web-standard fetch handler: `POST /webhooks` to the receiver (with the platform's `waitUntil`
 * when it has one), `GET /runs` to read what happened.
 */
export function matrixFetch(app) {
  return async (request, waitUntil) => {
    const url = new URL(request.url);
    if (url.pathname.endsWith('/runs')) return runsAnswer(app, url);
    return app.receiver.handle(request, waitUntil ? { waitUntil } : {});
  };
}

import { defaultDedupeKey } from '@payhook/core';
import { createEvent, signedBody } from '@payhook/testing';
import { expect } from 'vitest';
// @ts-expect-error plain JavaScript, shared with the runtimes that load it as it is
import { MATRIX_SECRET } from './app/matrix-app.mjs';
import { until } from '@payhook/test-support/wait';

export interface Runs {
  started: number;
  finished: number;
  /** Date.now() in the server when the handler last finished. */
  finishedAt?: number;
  record: { state: string; outcome?: string } | null;
}

/** Where one runtime serves the matrix app: its webhook URL and its `runs` URL. */
export interface MatrixTarget {
  webhooks: string;
  runs: string;
  /** How to reach it, when not by the global fetch: a Miniflare Worker's own fetcher (`mf.getWorker(name)`). */
  fetch?: (url: string, init?: RequestInit) => Promise<Response>;
}

export interface CaseOptions {
  /** Whether a handler past the budget must finish after the 202 (true where the platform keeps it alive). Default true. */
  lateFinishes?: boolean;
}

/** POST an event, signed as its JSON text. */
export async function post(url: string, event: object, secret = MATRIX_SECRET, via: MatrixTarget['fetch'] = fetch) {
  const { body, headers } = signedBody(event, { secret });
  const response = await via(url, { method: 'POST', body: body as string, headers });
  return { status: response.status, text: await response.text() };
}

/** What the handler did for an event, and the store's record of it. */
export async function runsOf(target: MatrixTarget, event: Parameters<typeof defaultDedupeKey>[0]): Promise<Runs> {
  const query = new URLSearchParams({ reference: event.reference, key: defaultDedupeKey(event) });
  const response = await (target.fetch ?? fetch)(`${target.runs}?${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Runs;
}

/**
 * The cases every runtime and framework version in the matrix answers: a valid delivery runs its
 * handler once (200), a bad signature gets 401 and runs nothing, a duplicate gets 2xx with no
 * second run, and a handler past the budget is answered 202 and finishes, its done record in the store.
 */
export async function expectCoreCases(target: MatrixTarget, options: CaseOptions = {}): Promise<void> {
  const event = createEvent('payment.success');
  expect((await post(target.webhooks, event)).status).toBe(200);
  expect(await runsOf(target, event)).toMatchObject({ started: 1, finished: 1, record: { state: 'done', outcome: 'ok' } });

  const forged = createEvent('payment.success');
  expect((await post(target.webhooks, forged, 'whsec_not_the_secret')).status).toBe(401);
  expect(await runsOf(target, forged)).toMatchObject({ started: 0, record: null });

  const again = await post(target.webhooks, event);
  expect(again.status).toBeGreaterThanOrEqual(200);
  expect(again.status).toBeLessThan(300);
  expect(await runsOf(target, event)).toMatchObject({ started: 1, finished: 1 });

  if (options.lateFinishes === false) return;
  const slow = slowEvent();
  expect((await post(target.webhooks, slow)).status).toBe(202);
  expect(await lateRuns(target, slow, (runs) => runs.finished >= 1 && runs.record?.state === 'done')).toMatchObject({
    started: 1,
    finished: 1,
    record: { state: 'done', outcome: 'ok' },
  });
}

/** An event whose handler outlives the budget (matrix-app.mjs): answered 202, finished later. */
export const slowEvent = () => createEvent('payment.success', { merchantReference: `slow-${crypto.randomUUID()}` });

/**
 * Read the runs of `event` until `done` holds of them (at most 10 s), and give them. The handler
 * runs in another process, on its own clock: polling is how to see it from here.
 */
export async function lateRuns(
  target: MatrixTarget,
  event: Parameters<typeof defaultDedupeKey>[0],
  done: (runs: Runs) => boolean,
): Promise<Runs> {
  let last: Runs | undefined;
  return until(async () => done((last = await runsOf(target, event))) && last, {
    timeoutMs: 10_000,
    intervalMs: 100,
    what: () => `the late handler's runs (last read: ${JSON.stringify(last)})`,
  });
}

/**
 * The bug a shared store removes: `copies` concurrent copies of one event, sent in turn to each
 * instance (separate processes or isolates on one store), run the handler once in all. Each copy is
 * answered 200 (ran it, or a duplicate) or 409 (running elsewhere; the service retries).
 */
export async function expectOnceAcross(instances: MatrixTarget[], copies = 20): Promise<void> {
  const event = createEvent('payment.success');
  const answers = await Promise.all(
    Array.from({ length: copies }, (_, i) => {
      const instance = instances[i % instances.length]!;
      return post(instance.webhooks, event, MATRIX_SECRET, instance.fetch);
    }),
  );
  for (const answer of answers) expect([200, 409], answer.text).toContain(answer.status);
  const runs = await Promise.all(instances.map((instance) => runsOf(instance, event)));
  expect(runs.reduce((sum, r) => sum + r.started, 0)).toBe(1);
  // Every instance reads the one record from the shared store.
  for (const r of runs) expect(r.record).toMatchObject({ state: 'done', outcome: 'ok' });
}

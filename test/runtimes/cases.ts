import { defaultDedupeKey } from '@payhook/core';
import { createEvent, signedBody } from '@payhook/testing';
import { expect } from 'vitest';
// @ts-expect-error plain JavaScript, shared with the runtimes that load it as it is
import { MATRIX_SECRET } from './app/matrix-app.mjs';

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
}

export interface CaseOptions {
  /** Whether a handler past the budget must finish after the 202 (true where the platform keeps it alive). Default true. */
  lateFinishes?: boolean;
}

/** POST an event, signed as its JSON text. */
export async function post(url: string, event: object, secret = MATRIX_SECRET) {
  const { body, headers } = signedBody(event, { secret });
  const response = await fetch(url, { method: 'POST', body: body as string, headers });
  return { status: response.status, text: await response.text() };
}

/** What the handler did for an event, and the store's record of it. */
export async function runsOf(target: MatrixTarget, event: Parameters<typeof defaultDedupeKey>[0]): Promise<Runs> {
  const query = new URLSearchParams({ reference: event.reference, key: defaultDedupeKey(event) });
  const response = await fetch(`${target.runs}?${query}`);
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
  expect(await until(() => runsOf(target, slow), (runs) => runs.finished >= 1 && runs.record?.state === 'done')).toMatchObject({
    started: 1,
    finished: 1,
    record: { state: 'done', outcome: 'ok' },
  });
}

/** An event whose handler outlives the budget (matrix-app.mjs): answered 202, finished later. */
export const slowEvent = () => createEvent('payment.success', { merchantReference: `slow-${crypto.randomUUID()}` });

/**
 * Read `read()` until `done` holds of it, for at most 10 s, and give the last reading. The work
 * goes on in another process, on its own clock: polling is how to see it from here.
 */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

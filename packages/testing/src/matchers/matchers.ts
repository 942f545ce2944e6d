import { defaultDedupeKey, type PaymentEvent, type Mode, type PaymentEventName, type Receiver, type Store } from '@payhook/core';
import type { StoreRecord } from '@payhook/core/store';
import { createEvent } from '../events/create-event.js';
import { deliveredItems, deliveredMessage } from './delivered-matcher.js';
import { isHandlerRuns, type HandlerRuns } from './handler-runs.js';

/** What a matcher returns: the shape vitest's and jest's `expect.extend` both take. */
export interface MatcherResult {
  /** Whether the expectation held (before `.not`). */
  pass: boolean;
  /** The failure's message, made when it is shown. */
  message: () => string;
}

/** The part of vitest's and jest's matcher context these matchers use (both provide it). */
export interface MatcherContext {
  /** True under `.not`. */
  isNot?: boolean;
  /** The runner's printers, for the values in a message. */
  utils?: { printReceived?: (value: unknown) => string; printExpected?: (value: unknown) => string };
}

/** How `toHaveProcessedExactlyOnce` builds the dedupe key from a reference. */
export interface ProcessedOptions {
  /** The mode of the transaction, for building the dedupe key from a reference. Default `sandbox`. */
  mode?: Mode;
}

/**
 * The matchers' types. They are added to jest's global `jest.Matchers`, which vitest's `Assertion`
 * extends, so `expect(receiver).toHaveProcessedExactlyOnce(…)` type-checks in both once this
 * package is imported. With `@jest/globals`, add `declare module 'expect' { interface Matchers<R>
 * extends PayhookMatchers<R> {} }` to a `.d.ts` of your own.
 */
export interface PayhookMatchers<R = unknown> {
  /**
   * The event's handlers ran to the end exactly once. The received value is a receiver (its
   * store's done record is checked), a store (default dedupe key), a `recordRuns()` record
   * (exactly one run returned), or an object holding `receiver` and/or `runs` (all are checked).
   * Async: `await` it.
   */
  toHaveProcessedExactlyOnce(event: PaymentEvent): Promise<R>;
  /** The same, for the event of that reference and name (the default dedupe key, in `options.mode`). */
  toHaveProcessedExactlyOnce(reference: string, event: PaymentEventName, options?: ProcessedOptions): Promise<R>;
  /**
   * Every delivery got a 2xx: a `deliver()` result, one of its deliveries, or the reference
   * service's `Delivery` records (`ref.deliveries()`). Its message lists each attempt's status and
   * the receiver's outcome (`401 unauthorized`), with a hint when the signature was refused.
   */
  toHaveBeenDelivered(): R;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // Vitest's Assertion extends jest.Matchers<void, T>: this one augmentation serves both.
    interface Matchers<R, T = {}> extends PayhookMatchers<R> {}
  }
}

const isStore = (v: unknown): v is Store =>
  typeof v === 'object' && v !== null && typeof (v as Store).get === 'function' && typeof (v as Store).claim === 'function';
const isReceiver = (v: unknown): v is Receiver =>
  typeof v === 'object' && v !== null && isStore((v as Receiver).store) && typeof (v as Receiver).dedupeKey === 'function';

function show(ctx: MatcherContext, value: unknown): string {
  if (ctx.utils?.printReceived) return ctx.utils.printReceived(value);
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function describeRecord(key: string, record: StoreRecord | undefined): { ok: boolean; text: string } {
  if (!record) {
    return {
      ok: false,
      text:
        `the store has no record of ${key}: no delivery of it reached a handler (none was sent, it was answered 401/400, ` +
        'no handler is registered for the event, or the key differs: check the mode, or pass the event itself)',
    };
  }
  switch (record.state) {
    case 'done':
      return record.outcome === 'ok'
        ? {
            ok: true,
            text: `the store marks ${key} done (handlers returned, after ${record.attempt} run${record.attempt === 1 ? '' : 's'})`,
          }
        : {
            ok: false,
            text: `the store marks ${key} done with outcome "rejected": a handler threw NonRetriableError, so it was not processed`,
          };
    case 'claimed':
      return {
        ok: false,
        text: `${key} is still claimed (run ${record.attempt}): its handler is still running, e.g. after a 202; wait for it (runs.settled()) before asserting`,
      };
    case 'released':
      return { ok: false, text: `${key} was released after run ${record.attempt}: its handler threw, so the service would retry it` };
  }
}

/**
 * Matchers for `expect.extend`, in vitest and in jest. They import neither: each returns
 * `{ pass, message }`.
 *
 * @example
 * import { expect } from 'vitest';
 * import { payhookMatchers } from '@payhook/testing';
 * expect.extend(payhookMatchers);
 * await expect(receiver).toHaveProcessedExactlyOnce(event.reference, 'payment.success');
 */
export const payhookMatchers = {
  async toHaveProcessedExactlyOnce(
    this: MatcherContext,
    received: unknown,
    referenceOrEvent: string | PaymentEvent,
    eventName?: PaymentEventName,
    options: ProcessedOptions = {},
  ): Promise<MatcherResult> {
    let event: PaymentEvent;
    if (typeof referenceOrEvent === 'string') {
      if (typeof eventName !== 'string') {
        throw new TypeError(
          "[@payhook/testing] toHaveProcessedExactlyOnce(reference, event): pass the event name too, e.g. ('ref_…', 'payment.success'), or pass the event object.",
        );
      }
      event = createEvent(eventName, { reference: referenceOrEvent, mode: options.mode ?? 'sandbox' });
    } else if (typeof referenceOrEvent === 'object' && referenceOrEvent !== null && typeof referenceOrEvent.reference === 'string') {
      event = referenceOrEvent;
    } else {
      throw new TypeError(
        '[@payhook/testing] toHaveProcessedExactlyOnce takes (reference, eventName) or an event object (see createEvent).',
      );
    }

    const holder = (typeof received === 'object' && received !== null ? received : {}) as {
      receiver?: unknown;
      runs?: unknown;
      store?: unknown;
    };
    const runs: HandlerRuns | undefined = isHandlerRuns(received) ? received : isHandlerRuns(holder.runs) ? holder.runs : undefined;
    const receiver = isReceiver(received) ? received : isReceiver(holder.receiver) ? holder.receiver : undefined;
    const store = receiver?.store ?? (isStore(received) ? received : undefined);
    if (!runs && !store) {
      throw new TypeError(
        '[@payhook/testing] toHaveProcessedExactlyOnce checks a receiver, a store, a recordRuns() record, or an object with `receiver` or `runs`; ' +
          `got ${show(this, received)}.`,
      );
    }

    const findings: { ok: boolean; text: string }[] = [];
    if (store) {
      const key = receiver ? receiver.dedupeKey(event) : defaultDedupeKey(event);
      findings.push(describeRecord(key, await store.get(key)));
    }
    if (runs) {
      const all = runs.of(event.reference, event.event);
      const completed = all.filter((r) => r.result === 'ok').length;
      const detail = all.length === 0 ? 'no runs' : all.map((r) => `run ${r.attempt}: ${r.result}`).join(', ');
      findings.push({
        ok: completed === 1,
        text: `the tracked handlers of ${event.event} for ${event.reference} returned ${completed} time${completed === 1 ? '' : 's'} (${detail})`,
      });
    }
    const pass = findings.every((f) => f.ok);
    const what = `${event.event} of ${event.reference}`;
    return {
      pass,
      message: () =>
        pass
          ? `expected ${what} not to have been processed exactly once, but ${findings.map((f) => f.text).join('; and ')}`
          : `expected ${what} to have been processed exactly once, but ${findings
              .filter((f) => !f.ok)
              .map((f) => f.text)
              .join('; and ')}`,
    };
  },

  toHaveBeenDelivered(this: MatcherContext, received: unknown): MatcherResult {
    const items = deliveredItems(received);
    if (!items) {
      throw new TypeError(
        `[@payhook/testing] toHaveBeenDelivered checks a deliver() result, one of its deliveries, or ref.deliveries(); got ${show(this, received)}.`,
      );
    }
    const pass = items.length > 0 && items.every((i) => i.state === 'delivered');
    return { pass, message: () => deliveredMessage(items, pass) };
  },
};

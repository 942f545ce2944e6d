import http from 'node:http';
import https from 'node:https';
import { paymentEventSchema, sign, SIGNATURE_HEADER, type PaymentEventName } from '@payhook/core';
import { attemptError } from './attempt-error.js';
import { callbackUrlProblem, resolveCallbackTarget, type CallbackLookup } from './callback-url.js';
import type { Clock } from './clock.js';
import type { Delivery, DeliveryAttempt, DeliveryFilter } from './delivery-record.js';
import type { FaultRule, Faults } from './faults.js';
import type { Merchant } from './merchants.js';
import { postToPinnedAddress, type Agents } from './pinned-post.js';
import { DELIVERY_TIMEOUT_MS, MAX_ATTEMPTS, RETRY_DELAYS_MS } from './retry-schedule.js';
import { toPayload, type Transaction } from './transactions.js';

// What the dispatcher records; test/security imports it from here.
export type { Delivery } from './delivery-record.js';

export interface Dispatcher {
  /** Send `event` for `tx` to its callback URL: record the delivery and start its first attempt. */
  send(merchant: Merchant, tx: Transaction, event: PaymentEventName): Delivery[];
  /** Deliveries, oldest first. */
  list(filter?: DeliveryFilter): Delivery[];
  /** Deliver the same bytes again, as a new delivery (`resendOf` names the first); undefined for an unknown id. */
  resend(id: string): Delivery | undefined;
  /** Take back deliveries saved earlier (a state file): retries that were due are scheduled again. */
  restore(saved: Delivery[]): void;
}

export interface DispatcherOptions {
  clock: Clock;
  faults: Faults;
  allowHttpCallbacks: boolean;
  /** The header deliveries are signed in, lower case. Default `x-service-signature` (the interface's); ePay's is `x-epay-signature`. */
  signatureHeader?: string;
  /** Report failures the service cannot answer with an HTTP status. Default: nothing. */
  onError?: (error: unknown) => void;
  /** Resolves callback host names before each attempt (every address is checked). Default: the system resolver. */
  lookup?: CallbackLookup;
  /** Called once each attempt is recorded (the CLI's live log). */
  onAttempt?: (delivery: Delivery, attempt: DeliveryAttempt) => void;
  /** Called whenever a delivery was recorded or changed (the CLI's state file). */
  onChange?: () => void;
}

/**
 * The webhook dispatcher: signs exactly the bytes it sends, times out after 10 s of the service's
 * clock, retries after 1, 2, 4 and 8 minutes, and marks the delivery permanently failed after the
 * 5th attempt. Redirects are not followed. Every attempt is recorded.
 *
 * @example
 * const dispatcher = createDispatcher({ clock, faults, allowHttpCallbacks: false });
 * dispatcher.send(merchant, tx, 'payment.success');
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { clock, faults } = options;
  const signatureHeader = options.signatureHeader ?? SIGNATURE_HEADER;
  const deliveries: Delivery[] = [];
  // Keep-alive pools, so a busy receiver is not paid a new connection (or TLS handshake) per delivery.
  const agents: Agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  const held = new Map<FaultRule, Delivery[]>();
  let n = 0;
  const iso = (ms: number) => new Date(ms).toISOString();

  /** Call back into the caller: its error is reported, and never ends a delivery. */
  const safely = (callback: (() => void) | undefined) => {
    try {
      callback?.();
    } catch (e) {
      options.onError?.(e);
    }
  };
  const changed = () => safely(options.onChange);

  function record(
    from: Pick<Delivery, 'merchantId' | 'mode' | 'reference' | 'event' | 'url' | 'body' | 'signature'>,
    copy: { duplicateOf?: string; resendOf?: string } = {},
  ): Delivery {
    const { url } = from;
    const problem =
      url === null
        ? 'No callback URL: set one for the merchant or pass callbackUrl at initialize.'
        : callbackUrlProblem(url, options.allowHttpCallbacks);
    const d: Delivery = {
      id: `dlv_${++n}`,
      merchantId: from.merchantId,
      mode: from.mode,
      reference: from.reference,
      event: from.event,
      url,
      state: problem ? 'failed' : 'pending',
      attempts: [],
      nextAttemptAt: null,
      createdAt: iso(clock.now()),
      duplicateOf: copy.duplicateOf ?? null,
      resendOf: copy.resendOf ?? null,
      error: problem,
      body: from.body,
      signature: from.signature,
      signatureHeader,
    };
    deliveries.push(d);
    changed();
    return d;
  }

  /** Record an attempt's outcome, then deliver, fail for good, or schedule the next attempt. */
  function settle(
    d: Delivery,
    number: number,
    startedAt: number,
    status: number | null,
    error: string | null,
    then?: () => void,
    responseBody: string | null = null,
  ): DeliveryAttempt {
    const a: DeliveryAttempt = { number, at: iso(startedAt), status, durationMs: clock.now() - startedAt, error, responseBody };
    d.attempts.push(a);
    if (error === null) d.state = 'delivered';
    else if (number >= MAX_ATTEMPTS) d.state = 'failed';
    else {
      const at = startedAt + RETRY_DELAYS_MS[number - 1]!;
      d.state = 'retrying';
      d.nextAttemptAt = iso(at);
      clock.at(at, () => attempt(d));
    }
    safely(() => options.onAttempt?.(d, a));
    changed();
    safely(then);
    return a;
  }

  /** Run one attempt; `then` runs once it is recorded (used to send held deliveries in order). */
  function attempt(d: Delivery, then?: () => void): void {
    const number = d.attempts.length + 1;
    const startedAt = clock.now();
    d.nextAttemptAt = null;
    const injected = faults.take(d, ['fail']);
    if (injected) {
      // A sandbox `fail` fault fails at once, without the network: no request to time out and no
      // work for the clock to wait for, so the virtual clock runs 100,000 retries in well under 1 s.
      settle(d, number, startedAt, null, attemptError({ kind: 'injected', faultId: injected.id }), then);
      return;
    }
    const deadline = startedAt + DELIVERY_TIMEOUT_MS;
    const controller = new AbortController();
    const stopTimer = clock.at(deadline, () => controller.abort());
    const work = (async () => {
      let status: number | null = null;
      let error: string | null = null;
      // The body may come before or after the attempt is recorded.
      const body: { text: string | null; attempt?: DeliveryAttempt } = { text: null };
      const onBody = (text: string) => {
        body.text = text;
        if (body.attempt) {
          body.attempt.responseBody = text;
          changed();
        }
      };
      try {
        // Resolved and checked now, at every attempt, and connected to that very address.
        const target = await resolveCallbackTarget(d.url!, { allowLoopback: options.allowHttpCallbacks, lookup: options.lookup });
        if (!target.ok) throw new RefusedTarget(target.problem);
        status = await postToPinnedAddress(target, d, signatureHeader, controller.signal, agents, onBody);
        error = attemptError({ kind: 'answered', status });
      } catch (e) {
        error = attemptError(
          e instanceof RefusedTarget
            ? { kind: 'refused', problem: e.message }
            : controller.signal.aborted
              ? { kind: 'timeout', ms: DELIVERY_TIMEOUT_MS }
              : { kind: 'connection-error', error: e },
        );
      }
      stopTimer();
      body.attempt = settle(d, number, startedAt, status, error, then, body.text);
    })().catch((e) => options.onError?.(e));
    void clock.track(work, deadline);
  }

  function start(d: Delivery): void {
    if (d.state === 'failed') return;
    const fault = faults.take(d, ['drop', 'delay', 'reorder']);
    if (fault?.type === 'drop') {
      d.state = 'dropped';
    } else if (fault?.type === 'delay') {
      d.nextAttemptAt = iso(clock.now() + fault.ms);
      clock.at(clock.now() + fault.ms, () => {
        attempt(d);
      });
    } else if (fault?.type === 'reorder') {
      d.state = 'held';
      const group = [...(held.get(fault) ?? []), d];
      held.set(fault, group);
      if (fault.remaining === 0) {
        held.delete(fault);
        const newestFirst = group.reverse();
        for (const h of newestFirst) h.state = 'pending';
        const next = (i: number) => () => {
          if (i < newestFirst.length) attempt(newestFirst[i]!, next(i + 1));
        };
        next(0)();
      }
    } else {
      attempt(d);
    }
  }

  return {
    send(merchant, tx, event) {
      const payload = toPayload(tx, event);
      // A payload that fails the schema is a bug in the service, never something to send.
      paymentEventSchema.parse(payload);
      const body = JSON.stringify(payload);
      const from = {
        merchantId: merchant.id,
        mode: tx.mode,
        reference: tx.reference,
        event,
        url: tx.callbackUrl ?? merchant.callbackUrl ?? null,
        body,
        signature: sign(body, merchant.webhookSecret),
      };
      const first = record(from);
      const sent = [first];
      const duplicate = first.state === 'failed' ? undefined : faults.take(first, ['duplicate']);
      for (let i = 0; i < (duplicate?.times ?? 0); i++) sent.push(record(from, { duplicateOf: first.id }));
      start(first);
      // Copies skip the other faults: one rule, one effect.
      for (const copy of sent.slice(1)) attempt(copy);
      return sent;
    },
    resend(id) {
      const original = deliveries.find((d) => d.id === id);
      if (!original) return undefined;
      const copy = record(original, { resendOf: original.id });
      start(copy);
      return copy;
    },
    restore(saved) {
      for (const d of saved) {
        deliveries.push(d);
        n = Math.max(n, Number(/^dlv_(\d+)$/.exec(d.id)?.[1] ?? 0));
      }
      for (const d of saved) {
        // An attempt cut short by the restart is lost: it runs again, as the next attempt.
        const due = d.nextAttemptAt === null ? clock.now() : Math.max(clock.now(), Date.parse(d.nextAttemptAt));
        if (d.state === 'retrying' || d.state === 'pending') clock.at(due, () => attempt(d));
      }
    },
    list(filter = {}) {
      return deliveries.filter(
        (d) =>
          (filter.merchantId === undefined || d.merchantId === filter.merchantId) &&
          (filter.mode === undefined || d.mode === filter.mode) &&
          (filter.reference === undefined || d.reference === filter.reference),
      );
    },
  };
}

class RefusedTarget extends Error {}

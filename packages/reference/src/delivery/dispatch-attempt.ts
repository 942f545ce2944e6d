import { attemptError } from './attempt-error.js';
import { resolveCallbackTarget } from './callback-url.js';
import type { Delivery, DeliveryAttempt } from './delivery-record.js';
import { changed, type DispatchState, iso, safely } from './dispatch-state.js';
import type { FaultRule } from './faults.js';
import { postToPinnedAddress } from './pinned-post.js';
import { DELIVERY_TIMEOUT_MS, MAX_ATTEMPTS, RETRY_DELAYS_MS } from './retry-schedule.js';

/** What an attempt came to: the receiver's status (null when none came) and the error, null when delivered. */
interface Outcome {
  status: number | null;
  error: string | null;
  responseBody?: string | null;
}

/** Record an attempt's outcome, then deliver, fail for good, or schedule the next attempt. */
function settle(
  state: DispatchState,
  d: Delivery,
  number: number,
  startedAt: number,
  outcome: Outcome,
  then?: () => void,
): DeliveryAttempt {
  const { clock } = state.options;
  const { status, error, responseBody = null } = outcome;
  const a: DeliveryAttempt = { number, at: iso(startedAt), status, durationMs: clock.now() - startedAt, error, responseBody };
  d.attempts.push(a);
  if (error === null) d.state = 'delivered';
  else if (number >= MAX_ATTEMPTS) d.state = 'failed';
  else {
    const at = startedAt + RETRY_DELAYS_MS[number - 1]!;
    d.state = 'retrying';
    d.nextAttemptAt = iso(at);
    clock.at(at, () => attempt(state, d));
  }
  safely(state, () => state.options.onAttempt?.(d, a));
  changed(state);
  safely(state, then);
  return a;
}

/** Run one attempt; `then` runs once it is recorded (used to send held deliveries in order). */
export function attempt(state: DispatchState, d: Delivery, then?: () => void): void {
  const { clock, faults } = state.options;
  const number = d.attempts.length + 1;
  const startedAt = clock.now();
  d.nextAttemptAt = null;
  const injected = faults.take(d, ['fail']);
  if (injected) {
    // A sandbox `fail` fault fails at once, without the network: no request to time out and no
    // work for the clock to wait for, so the virtual clock runs 100,000 retries in well under 1 s.
    settle(state, d, number, startedAt, { status: null, error: attemptError({ kind: 'injected', faultId: injected.id }) }, then);
    return;
  }
  const deadline = startedAt + DELIVERY_TIMEOUT_MS;
  const controller = new AbortController();
  const stopTimer = clock.at(deadline, () => controller.abort());
  const work = post(state, { d, number, startedAt, controller, stopTimer, then }).catch((e) => state.options.onError?.(e));
  void clock.track(work, deadline);
}

/** One attempt on the network: what `post` needs to send it and to record how it went. */
interface Posting {
  d: Delivery;
  number: number;
  startedAt: number;
  /** Aborted by the clock at the attempt's deadline. */
  controller: AbortController;
  stopTimer: () => void;
  then: (() => void) | undefined;
}

/** Send the delivery to its callback URL, resolved and checked now, and record the attempt. */
async function post(state: DispatchState, { d, number, startedAt, controller, stopTimer, then }: Posting): Promise<void> {
  const { allowHttpCallbacks, lookup } = state.options;
  let status: number | null = null;
  let error: string | null = null;
  // The body may come before or after the attempt is recorded.
  const body: { text: string | null; attempt?: DeliveryAttempt } = { text: null };
  const onBody = (text: string) => {
    body.text = text;
    if (body.attempt) {
      body.attempt.responseBody = text;
      changed(state);
    }
  };
  try {
    // Resolved and checked now, at every attempt, and connected to that very address.
    const target = await resolveCallbackTarget(d.url!, { allowLoopback: allowHttpCallbacks, lookup });
    if (!target.ok) throw new RefusedTarget(target.problem);
    status = await postToPinnedAddress(target, d, state.signatureHeader, controller.signal, state.agents, onBody);
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
  body.attempt = settle(state, d, number, startedAt, { status, error, responseBody: body.text }, then);
}

/** Start a new delivery, unless its URL failed it: the sandbox faults `drop`, `delay` and `reorder` apply here. */
export function start(state: DispatchState, d: Delivery): void {
  if (d.state === 'failed') return;
  const { clock, faults } = state.options;
  const fault = faults.take(d, ['drop', 'delay', 'reorder']);
  if (fault?.type === 'drop') {
    d.state = 'dropped';
  } else if (fault?.type === 'delay') {
    d.nextAttemptAt = iso(clock.now() + fault.ms);
    clock.at(clock.now() + fault.ms, () => {
      attempt(state, d);
    });
  } else if (fault?.type === 'reorder') {
    hold(state, d, fault);
  } else {
    attempt(state, d);
  }
}

/** Hold `d` under a `reorder` rule; once the rule's group is complete, send it newest first, each after the one before is recorded. */
function hold(state: DispatchState, d: Delivery, fault: FaultRule): void {
  d.state = 'held';
  const group = [...(state.held.get(fault) ?? []), d];
  state.held.set(fault, group);
  if (fault.remaining !== 0) return;
  state.held.delete(fault);
  const newestFirst = group.reverse();
  for (const h of newestFirst) h.state = 'pending';
  const next = (i: number) => () => {
    if (i < newestFirst.length) attempt(state, newestFirst[i]!, next(i + 1));
  };
  next(0)();
}

/** A callback address refused at the attempt (a private address, a failed lookup): no request was sent. */
class RefusedTarget extends Error {}

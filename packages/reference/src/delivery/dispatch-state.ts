import http from 'node:http';
import https from 'node:https';
import { SIGNATURE_HEADER } from '@payhook/core';
import type { ServiceClock } from '../domain/clock.js';
import { callbackUrlProblem, type CallbackLookup } from './callback-url.js';
import type { Delivery, DeliveryAttempt } from './delivery-record.js';
import type { FaultRule, Faults } from './faults.js';
import type { Agents } from './pinned-post.js';

export interface DispatcherOptions {
  clock: ServiceClock;
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

/** Everything one dispatcher holds, passed to each step of a delivery instead of closed over. */
export interface DispatchState {
  readonly options: DispatcherOptions;
  readonly signatureHeader: string;
  /** Every delivery, oldest first. */
  readonly deliveries: Delivery[];
  /** Keep-alive pools, so a busy receiver is not paid a new connection (or TLS handshake) per delivery. */
  readonly agents: Agents;
  /** Deliveries a `reorder` fault holds until its group is complete. */
  readonly held: Map<FaultRule, Delivery[]>;
  /** The number of the last delivery id (`dlv_<n>`). */
  lastId: number;
}

export function createDispatchState(options: DispatcherOptions): DispatchState {
  return {
    options,
    signatureHeader: options.signatureHeader ?? SIGNATURE_HEADER,
    deliveries: [],
    agents: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
    held: new Map(),
    lastId: 0,
  };
}

export const iso = (ms: number) => new Date(ms).toISOString();

/** Call back into the caller: its error is reported, and never ends a delivery. */
export function safely(state: DispatchState, callback: (() => void) | undefined): void {
  try {
    callback?.();
  } catch (e) {
    state.options.onError?.(e);
  }
}

export const changed = (state: DispatchState) => safely(state, state.options.onChange);

/** What a delivery copies from the event it sends (or from the delivery it repeats). */
export type DeliverySource = Pick<Delivery, 'merchantId' | 'mode' | 'reference' | 'event' | 'url' | 'body' | 'signature'>;

/** Record a new delivery: `pending`, or `failed` at once when its callback URL cannot be used. */
export function record(state: DispatchState, from: DeliverySource, copy: { duplicateOf?: string; resendOf?: string } = {}): Delivery {
  const { url } = from;
  const problem =
    url === null
      ? 'No callback URL: set one for the merchant or pass callbackUrl at initialize.'
      : callbackUrlProblem(url, state.options.allowHttpCallbacks);
  const d: Delivery = {
    id: `dlv_${++state.lastId}`,
    merchantId: from.merchantId,
    mode: from.mode,
    reference: from.reference,
    event: from.event,
    url,
    state: problem ? 'failed' : 'pending',
    attempts: [],
    nextAttemptAt: null,
    createdAt: iso(state.options.clock.now()),
    duplicateOf: copy.duplicateOf ?? null,
    resendOf: copy.resendOf ?? null,
    error: problem,
    body: from.body,
    signature: from.signature,
    signatureHeader: state.signatureHeader,
  };
  state.deliveries.push(d);
  changed(state);
  return d;
}

// The steps only some receivers take, loaded the first time one is needed (issue 54): a receiver
// that is never refused loads no diagnosis, one without `ordering` no guard. Each is made once,
// from the settings it was given when the receiver was created, and kept.
import type { DeliveryReport } from '../contracts/delivery.js';
import type { DiagnoseInput, DiagnoseSettings, SignatureDiagnosis } from '../observing/diagnose.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { EVENTS_BEFORE, isPaymentEventName } from '../protocol/payment-lifecycle.js';
import type { VerifyResult } from '../protocol/signature.js';
import type { GuardedAccount, OrderGuard, OrderGuardSettings } from '../steps/order-guard.js';

type Diagnose = (verdict: Exclude<VerifyResult, { ok: true }>, input: DiagnoseInput) => Promise<SignatureDiagnosis>;

/** `createDiagnosis(s)`, loaded at the first refusal it examines. */
export function lazyDiagnosis(s: DiagnoseSettings): Diagnose {
  let diagnose: Promise<Diagnose> | undefined;
  return async (verdict, input) => {
    diagnose ??= import('../observing/diagnose.js').then((m) => m.createDiagnosis(s));
    return (await diagnose)(verdict, input);
  };
}

/**
 * `createOrderGuard(s)`, loaded at the first event that has earlier events to wait for: an event
 * that has none is let through here, at no cost, as the guard itself would let it through.
 */
export function lazyOrderGuard(s: OrderGuardSettings): OrderGuard {
  let guard: OrderGuard | undefined;
  let loading: Promise<OrderGuard> | undefined;
  return (event: PaymentEvent, budgetMs: number, a?: GuardedAccount): Promise<DeliveryReport | undefined> | undefined => {
    if (!isPaymentEventName(event.event) || EVENTS_BEFORE[event.event].length === 0) return undefined;
    if (guard) return guard(event, budgetMs, a);
    loading ??= import('../steps/order-guard.js').then((m) => (guard = m.createOrderGuard(s)));
    return loading.then((g) => g(event, budgetMs, a));
  };
}

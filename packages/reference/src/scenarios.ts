import type { Action } from './transitions.js';

/**
 * Sandbox test phone numbers (canonical form) and what they do. Any other number behaves
 * normally: the checkout page or the sandbox control decides.
 */
export const SANDBOX_PHONES = {
  '251900000001': { atInitialize: null, atCheckoutPay: 'fail', description: 'declined at checkout: pressing Pay fails the payment (payment.failed)' },
  '251900000002': { atInitialize: 'pay', atCheckoutPay: 'pay', description: 'paid at once: initialize completes the payment (payment.success)' },
  '251900000003': { atInitialize: 'fail', atCheckoutPay: 'fail', description: 'failed at once: initialize fails the payment (payment.failed)' },
} as const satisfies Record<string, { atInitialize: Action | null; atCheckoutPay: Action; description: string }>;

const scenario = (phone: string) => (Object.hasOwn(SANDBOX_PHONES, phone) ? SANDBOX_PHONES[phone as keyof typeof SANDBOX_PHONES] : undefined);

/** The move a sandbox test number makes right after initialize, if any. */
export function actionAtInitialize(mode: string, phone: string): Action | null {
  return mode === 'sandbox' ? (scenario(phone)?.atInitialize ?? null) : null;
}

/** What pressing Pay at checkout does for this phone number. */
export function actionAtCheckoutPay(mode: string, phone: string): Action {
  return mode === 'sandbox' ? (scenario(phone)?.atCheckoutPay ?? 'pay') : 'pay';
}

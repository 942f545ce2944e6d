import type { Action } from './transitions.js';

export interface SandboxPhone {
  /** The OTP the checkout page asks for; null when it asks for none. */
  otp: string | null;
  /** The move made right after initialize (our automation numbers), else null. */
  atInitialize: Action | null;
  /** What paying at checkout does once the OTP (if any) is the documented one. */
  atCheckoutPay: 'pay' | 'fail';
  /** The timeline's errorCode when the payment fails. */
  errorCode: string | null;
  description: string;
}

/**
 * Sandbox test phone numbers (canonical form), in sandbox mode only. `251900000000` to
 * `251900000004` are the official SDKs' numbers (go-sdk README "Sandbox testing"), with their OTPs;
 * `251900000010` and `251900000011` are the reference's own, for automation (no checkout needed).
 * Any other number pays at checkout without an OTP.
 */
export const SANDBOX_PHONES = {
  '251900000000': {
    otp: '000111',
    atInitialize: null,
    atCheckoutPay: 'pay',
    errorCode: null,
    description: 'generic sandbox account: OTP 000111 pays (payment.success)',
  },
  '251900000001': {
    otp: '123456',
    atInitialize: null,
    atCheckoutPay: 'pay',
    errorCode: null,
    description: 'OTP 123456 completes the payment (payment.success)',
  },
  '251900000002': {
    otp: '654321',
    atInitialize: null,
    atCheckoutPay: 'fail',
    errorCode: 'INVALID_OTP',
    description: 'OTP 654321 fails the payment with INVALID_OTP (payment.failed)',
  },
  '251900000003': {
    otp: '111111',
    atInitialize: null,
    atCheckoutPay: 'fail',
    errorCode: 'OTP_EXPIRED',
    description: 'OTP 111111 fails the payment with OTP_EXPIRED (payment.failed)',
  },
  '251900000004': {
    otp: null,
    atInitialize: null,
    atCheckoutPay: 'fail',
    errorCode: 'PAYMENT_DECLINED',
    description: 'no OTP; Pay is declined with PAYMENT_DECLINED (payment.failed)',
  },
  '251900000010': {
    otp: null,
    atInitialize: 'pay',
    atCheckoutPay: 'pay',
    errorCode: null,
    description: 'paid at once: initialize completes the payment (payment.success)',
  },
  '251900000011': {
    otp: null,
    atInitialize: 'fail',
    atCheckoutPay: 'fail',
    errorCode: 'PAYMENT_DECLINED',
    description: 'failed at once: initialize fails the payment (payment.failed)',
  },
} as const satisfies Record<string, SandboxPhone>;

/** The scenario of a number in this mode, if it is a sandbox test number. */
export function sandboxPhone(mode: string, phone: string): SandboxPhone | undefined {
  if (mode !== 'sandbox' || !Object.hasOwn(SANDBOX_PHONES, phone)) return undefined;
  return SANDBOX_PHONES[phone as keyof typeof SANDBOX_PHONES];
}

/** The move a sandbox test number makes right after initialize, if any, with the errorCode of a failure. */
export function actionAtInitialize(mode: string, phone: string): { action: Action; errorCode?: string } | null {
  const s = sandboxPhone(mode, phone);
  if (!s?.atInitialize) return null;
  return s.atInitialize === 'fail' && s.errorCode !== null ? { action: 'fail', errorCode: s.errorCode } : { action: s.atInitialize };
}

export type CheckoutPay = { ok: true; action: 'pay' | 'fail'; errorCode?: string } | { ok: false; problem: 'otp-missing' | 'otp-wrong' };

/**
 * What pressing Pay at checkout does for this phone number and the OTP entered: the documented OTP
 * gives the number's outcome; a missing or different one moves nothing.
 *
 * @example
 * checkoutPay('sandbox', '251900000002', '654321'); // { ok: true, action: 'fail', errorCode: 'INVALID_OTP' }
 * checkoutPay('sandbox', '251900000002', '000000'); // { ok: false, problem: 'otp-wrong' }
 */
export function checkoutPay(mode: string, phone: string, otp: string | null): CheckoutPay {
  const s = sandboxPhone(mode, phone);
  if (!s) return { ok: true, action: 'pay' };
  if (s.otp !== null) {
    const given = (otp ?? '').trim();
    if (given === '') return { ok: false, problem: 'otp-missing' };
    if (given !== s.otp) return { ok: false, problem: 'otp-wrong' };
  }
  if (s.atCheckoutPay === 'pay' || s.errorCode === null) return { ok: true, action: s.atCheckoutPay };
  return { ok: true, action: 'fail', errorCode: s.errorCode };
}

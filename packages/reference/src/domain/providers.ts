// The payment providers: the codes a merchant enables and a customer pays with, and the catalogue the provider endpoints list.
/** The payment providers a customer can pay with, by code (go-sdk types.go `ProviderItem`). */
export const PAYMENT_METHODS = ['telebirr', 'cbe_birr', 'mpesa', 'awash_bank'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** The provider catalogue of the provider endpoints; the same in sandbox and live. */
export const PROVIDER_CATALOGUE: readonly {
  providerCode: PaymentMethod;
  providerName: string;
  providerCategory: string;
  flowCode: string;
}[] = [
  { providerCode: 'telebirr', providerName: 'Telebirr', providerCategory: 'mobile_money', flowCode: 'ussd' },
  { providerCode: 'cbe_birr', providerName: 'CBE Birr', providerCategory: 'mobile_money', flowCode: 'mobile_banking' },
  { providerCode: 'mpesa', providerName: 'M-PESA', providerCategory: 'mobile_money', flowCode: 'ussd' },
  { providerCode: 'awash_bank', providerName: 'Awash Bank', providerCategory: 'bank', flowCode: 'mobile_banking' },
];

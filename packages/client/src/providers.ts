import { providerItemSchema, providerListSchema, providerSchema, type Provider, type ProviderItem } from '@payhook/core/api';
import type { Transport } from './transport.js';

/** The account's payment providers; a `sk_test_` key sees the sandbox's, a `sk_live_` key the live ones. */
export interface ProvidersApi {
  /** The compact list for a dropdown (`GET /v1/payment-providers/list`); the key needs `list_platform_payment_provider`, else 403. */
  list(): Promise<ProviderItem[]>;
  /** Every provider with its category and `isEnabled`, disabled ones too (`GET /v1/payment-providers`); the key needs `get_platform_payment_provider`, else 403. */
  getAll(): Promise<Provider[]>;
  /** The providers of `getAll` the account can route payments through now. */
  listEnabled(): Promise<Provider[]>;
}

const itemList = providerListSchema(providerItemSchema);
const fullList = providerListSchema(providerSchema);

export function createProvidersApi(transport: Transport): ProvidersApi {
  const getAll = async () => (await transport.call({ method: 'GET', path: '/v1/payment-providers', safe: true }, fullList)).data;
  return {
    list: async () => (await transport.call({ method: 'GET', path: '/v1/payment-providers/list', safe: true }, itemList)).data,
    getAll,
    listEnabled: async () => (await getAll()).filter((provider) => provider.isEnabled),
  };
}

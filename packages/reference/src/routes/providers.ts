import { PROVIDER_PERMISSIONS, type Provider, type ProviderItem } from '@payhook/core/api';
import { json } from '../http/messages.js';
import type { Route, RouteRequest } from '../contract/context.js';
import { PROVIDER_CATALOGUE } from '../domain/providers.js';

/**
 * `GET /v1/payment-providers/list`: the providers the account may route to, compact, for a
 * merchant's dropdown (go-sdk types.go `ProviderItem`, providers.go). The catalogue is the same in
 * sandbox and live; the key's mode only picks the account's side, which enables the same codes.
 */
function listEnabled({ caller }: RouteRequest): Response {
  const data: ProviderItem[] = PROVIDER_CATALOGUE.filter((p) => caller.merchant.providers.has(p.providerCode)).map((p) => ({
    providerCode: p.providerCode,
    providerName: p.providerName,
    flowCode: p.flowCode,
  }));
  return json({ data });
}

/** `GET /v1/payment-providers`: every provider, disabled ones too, with `isEnabled` (go-sdk types.go `Provider`). */
function getAll({ caller }: RouteRequest): Response {
  const data: Provider[] = PROVIDER_CATALOGUE.map((p) => ({
    providerCode: p.providerCode,
    providerName: p.providerName,
    providerCategory: p.providerCategory,
    flowCode: p.flowCode,
    isEnabled: caller.merchant.providers.has(p.providerCode),
  }));
  return json({ data });
}

/** The payment-provider endpoints, under `/v1`, gated by the permissions the SDKs name. */
export const providerRoutes: Route[] = [
  { method: 'GET', path: '/v1/payment-providers/list', access: 'api', permission: PROVIDER_PERMISSIONS.list, handle: listEnabled },
  { method: 'GET', path: '/v1/payment-providers', access: 'api', permission: PROVIDER_PERMISSIONS.getAll, handle: getAll },
];

/**
 * `@payhook/client`: a typed client of the payment service's API, and the rate limiter its clients share.
 *
 * @module
 */
export { createClient, type Client, type ClientOptions } from './client.js';
export { MAX_EMPTY_PAGES, windows, type ListFilters, type Transaction, type TransactionPage } from './list.js';
export type { ProvidersApi } from './providers.js';
export { PaymentServiceError, type FailedRequest } from './errors.js';
export { createRateLimiter, type Priority, type RateLimiter, type RateLimiterOptions } from './rate-limiter.js';
export type {
  InitializeInput,
  InitializeResult,
  ListPage,
  Provider,
  ProviderItem,
  Timeline,
  TimelineEvent,
  TransactionRecord,
} from '@payhook/core/api';

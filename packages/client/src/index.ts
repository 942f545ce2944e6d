export { createClient, windows, type Client, type ClientOptions, type ListFilters } from './client.js';
export { PaymentServiceError, type FailedRequest } from './errors.js';
export { createRateLimiter, type Priority, type RateLimiter, type RateLimiterOptions } from './rate-limiter.js';
export type { InitializeInput, InitializeResult, ListPage, Timeline, TimelineEntry, TransactionRecord } from '@payhook/core/api';

import type { HandlerContext } from '@payhook/core';

/** The context a receiver gives a handler for `key` under the claim `claimToken`, for calling a store's `transactional()` directly. */
export const contextFor = (key: string, claimToken: string): HandlerContext => ({
  reference: key,
  dedupeKey: key,
  secretIndex: 0,
  redelivery: false,
  attempt: 1,
  claimToken,
  source: 'webhook',
});

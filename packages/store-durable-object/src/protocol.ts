import type { Outcome } from '@payhook/core/store';

export const NAME = '[@payhook/store-durable-object]';

/** What the Worker's store asks its Durable Object, one JSON body per call. Every time and bound is the Worker's. */
export type StoreCall =
  | { op: 'claim'; key: string; leaseMs: number; retentionMs: number }
  | { op: 'complete'; key: string; token: string; outcome: Outcome; ttlMs: number }
  | { op: 'release'; key: string; token: string; retentionMs: number }
  | { op: 'extend'; key: string; token: string; leaseMs: number }
  | { op: 'get'; key: string };

import { EVENT_NAMES } from '@payhook/core/lifecycle';
import { z } from 'zod';

/**
 * A sandbox fault rule (`POST /_sandbox/faults`). It applies to the next `count` deliveries of the
 * merchant's sandbox that match `reference` and `event` (when given):
 * - `duplicate`: each is sent `1 + times` times, as separate deliveries with the same body;
 * - `drop`: each is recorded as dropped and never sent;
 * - `delay`: each one's first attempt waits `ms` milliseconds of the service's clock;
 * - `reorder`: the `count` deliveries (default 2) are held and, once the last one exists, sent
 *   newest first, one after another;
 * - `fail`: the next `count` attempts fail as if the receiver answered 500, without being sent.
 */
export const faultInputSchema = z.object({
  type: z.enum(['duplicate', 'drop', 'delay', 'reorder', 'fail'], {
    error: 'type must be one of: duplicate, drop, delay, reorder, fail',
  }),
  count: z.number({ error: 'count must be a whole number from 1 to 1000' }).int().min(1).max(1000).optional(),
  times: z.number({ error: 'times must be a whole number from 1 to 10' }).int().min(1).max(10).optional(),
  ms: z.number({ error: 'ms must be a whole number of milliseconds from 0 to 86400000' }).int().min(0).max(86_400_000).optional(),
  reference: z.string({ error: 'reference must be a transaction reference' }).optional(),
  event: z.enum(EVENT_NAMES, { error: `event must be one of: ${EVENT_NAMES.join(', ')}` }).optional(),
});
/** A fault rule as `POST /_sandbox/faults` takes it, checked by `faultInputSchema`. */
export type FaultInput = z.infer<typeof faultInputSchema>;

/** A fault rule as the service keeps it, its defaults filled in. */
export interface FaultRule {
  /** `fault_1`, `fault_2`, … */
  id: string;
  /** The merchant whose sandbox it applies to. */
  merchantId: string;
  /** What it does: `duplicate`, `drop`, `delay`, `reorder` or `fail`. */
  type: FaultInput['type'];
  /** Deliveries (or attempts, for `fail`) it applies to: as given, else 2 for `reorder` and 1 for the rest. */
  count: number;
  /** How many more deliveries (or attempts, for `fail`) it applies to. */
  remaining: number;
  /** Extra copies a `duplicate` sends. Default 1. */
  times: number;
  /** How long a `delay` holds the first attempt, in ms of the service's clock. Default 30,000. */
  ms: number;
  /** Only deliveries of this transaction, when given. */
  reference: string | undefined;
  /** Only deliveries of this event, when given. */
  event: string | undefined;
}

export interface Target {
  merchantId: string;
  mode: string;
  reference: string;
  event: string;
}

export interface Faults {
  add(merchantId: string, input: FaultInput): FaultRule;
  list(merchantId: string): FaultRule[];
  clear(merchantId: string): void;
  /** The first rule of one of `types` matching `target`, counted as used once; sandbox only. */
  take(target: Target, types: readonly FaultRule['type'][]): FaultRule | undefined;
}

/**
 * The fault rules of every merchant's sandbox.
 *
 * @example
 * faults.add('merchant_1', { type: 'duplicate', times: 2 });
 */
export function createFaults(): Faults {
  let rules: FaultRule[] = [];
  let n = 0;
  return {
    add(merchantId, input) {
      const count = input.count ?? (input.type === 'reorder' ? 2 : 1);
      const rule: FaultRule = {
        id: `fault_${++n}`,
        merchantId,
        type: input.type,
        count,
        remaining: count,
        times: input.times ?? 1,
        ms: input.ms ?? 30_000,
        reference: input.reference,
        event: input.event,
      };
      rules.push(rule);
      return rule;
    },
    list: (merchantId) => rules.filter((r) => r.merchantId === merchantId),
    clear(merchantId) {
      rules = rules.filter((r) => r.merchantId !== merchantId);
    },
    take(target, types) {
      if (target.mode !== 'sandbox') return undefined;
      const rule = rules.find(
        (r) =>
          r.merchantId === target.merchantId &&
          types.includes(r.type) &&
          (r.reference === undefined || r.reference === target.reference) &&
          (r.event === undefined || r.event === target.event),
      );
      if (!rule) return undefined;
      rule.remaining -= 1;
      if (rule.remaining === 0) rules = rules.filter((r) => r !== rule);
      return rule;
    },
  };
}

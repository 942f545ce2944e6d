import type { LoggerObject, LogLevel } from '../base/logger.js';
import type { DeliveryReport } from './delivery.js';
import type { LoopBlockedReport } from './handling.js';

/**
 * What a log line carries besides its message, as a function logger gets it. Most lines are a
 * delivery's report (`outcome`, `status`, `reference`, `event`, `deliveryId`…), its error under
 * `err`; the others add a few fields of their own, named here. Every field is optional, since
 * each line carries only its own, and a field not named here is `unknown`.
 *
 * @example
 * createReceiver({ secret, logger: (level, fields, message) => {
 *   if (fields.outcome === 'failed') alert(fields.reference, fields.err);
 * } });
 */
export type LogFields = Partial<Omit<DeliveryReport, 'error'>> &
  Partial<LoopBlockedReport> & {
    /** The error, where pino, bunyan and winston look for it. */
    err?: unknown;
    /** A board action, for the audit: who did what, to what (`@payhook/board`). */
    board?: { user?: string; account?: string; action?: string; [field: string]: unknown };
    /** Refusals not recorded, or lines not logged, in the last minute. */
    skipped?: number;
    /** Ledger records dropped (the store fell behind) or not written. */
    dropped?: number;
    /** Ledger records that could not be written or were refused, on the line that says so. */
    records?: number;
    /** Why the memory store cannot deduplicate here (`cause`), and the platform it runs on. */
    cause?: string;
    /** The platform the memory store runs on, on the line that says it cannot deduplicate there. */
    platform?: string;
    /** How often the order guard held an event before running it. */
    holds?: number;
    [field: string]: unknown;
  };

/** A plain function as the logger: structured fields first, message second. */
export type LogFunction = (level: LogLevel, fields: LogFields, message: string) => void;

/** The `logger` option: an object with level methods (pino, winston, `console`…) or a plain function. */
export type LoggerOption = LoggerObject | LogFunction;

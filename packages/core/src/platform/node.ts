import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { DeliveryReport } from '../pipeline/outcome.js';
import type { SyncHmac } from './platform.js';

const UPPER_HEX = /[A-F]/;

/** node:crypto, for the `node`, `bun` and `deno` conditions. Plain byte keys: cheaper per call than a KeyObject (BENCHMARKS.md). */
export const syncHmac: SyncHmac | null = {
  createHmac,
  timingSafeEqual,
  key: (secret) => Buffer.from(secret),
  // Buffer's decoder stops at the first non-hex character, and takes upper case too, which the service never sends.
  fromHex(hex) {
    const bytes = Buffer.from(hex, 'hex');
    return bytes.length === 32 && !UPPER_HEX.test(hex) ? bytes : undefined;
  },
};

/** A timer set while one request is handled may fire after it has been answered: one timer can serve every delivery. */
export const timersOutliveRequests = true;

const deliveries = diagnosticsChannel.channel('payhook:delivery');
/** Every report, on `node:diagnostics_channel` as `payhook:delivery`, when something subscribes. */
export const publishReport: ((report: DeliveryReport) => void) | undefined = (report) => {
  if (deliveries.hasSubscribers) deliveries.publish(report);
};

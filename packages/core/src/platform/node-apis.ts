import { Buffer } from 'node:buffer';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Hashable, PublishReport, SyncHmac } from './platform.js';

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

/** Hex SHA-256, synchronous: a refused body is hashed in about 1 ms per MiB, with no promise per record. */
export const sha256Hex: ((body: Hashable) => string) | null = (body) => createHash('sha256').update(body).digest('hex');

/** A timer set while one request is handled may fire after it has been answered: one timer can serve every delivery. */
export const timersOutliveRequests = true;

const deliveries = diagnosticsChannel.channel('payhook:delivery');
/** Every report, on `node:diagnostics_channel` as `payhook:delivery`, when something subscribes. */
export const publishReport: PublishReport | undefined = (report) => {
  if (deliveries.hasSubscribers) deliveries.publish(report);
};

// The service's retry schedule (section 6): when a failed delivery is attempted again, and how long an attempt may take.
import { SERVICE_TIMEOUT_MS } from '@payhook/core/lifecycle';

/** Delay before attempts 2 to 5 (section 6), counted from the start of the attempt before. */
export const RETRY_DELAYS_MS = [60_000, 120_000, 240_000, 480_000] as const;
/** Attempts of a delivery, the first included: 5. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** A delivery not answered with 2xx within this time counts as failed. */
export const DELIVERY_TIMEOUT_MS = SERVICE_TIMEOUT_MS;

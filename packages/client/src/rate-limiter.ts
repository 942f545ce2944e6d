/** What `createRateLimiter` takes; every field has a default. */
export interface RateLimiterOptions {
  /** Requests allowed per window. Default 100, the service's limit per API key. */
  limit?: number;
  /** Default 60,000 ms. */
  windowMs?: number;
  /** The share of the window background callers (the reconciler) may use. Default 0.5. */
  backgroundShare?: number;
  /** The clock, in epoch ms (for a virtual clock in tests). Default `Date.now`. */
  now?: () => number;
  /** How waiting is done (for a virtual clock in tests). Default: real timers. */
  sleep?: (ms: number) => Promise<void>;
}

/** Who goes first on a shared limiter: `foreground` (the app's calls) or `background` (the reconciler's), which keeps to its share. */
export type Priority = 'foreground' | 'background';

/** A rate limit that clients of one API key share (`createRateLimiter`). */
export interface RateLimiter {
  /** Resolves when a request may be sent now; background callers wait while their share is used. */
  acquire(priority?: Priority): Promise<void>;
}

/**
 * A sliding-window limiter that clients of one API key share, so background work never uses
 * up the service's 100 requests per 60 s that the app needs.
 *
 * @example
 * const limiter = createRateLimiter();
 * const app = createClient({ apiKey, baseUrl, limiter });
 * const background = createClient({ apiKey, baseUrl, limiter, priority: 'background' });
 */
export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const limit = options.limit ?? 100;
  const windowMs = options.windowMs ?? 60_000;
  const backgroundLimit = Math.max(1, Math.floor(limit * (options.backgroundShare ?? 0.5)));
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const sent: number[] = []; // send times, oldest first

  return {
    async acquire(priority = 'foreground') {
      const cap = priority === 'background' ? backgroundLimit : limit;
      for (;;) {
        const t = now();
        while (sent.length > 0 && sent[0]! <= t - windowMs) sent.shift();
        if (sent.length < cap) {
          sent.push(t);
          return;
        }
        // The slot that frees first is the (length - cap + 1)-th oldest send.
        await sleep(Math.max(1, sent[sent.length - cap]! + windowMs - t));
      }
    },
  };
}

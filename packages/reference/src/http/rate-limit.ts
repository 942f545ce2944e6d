export interface RateLimiter {
  /** Count one request for `key`; when over the limit, say how many whole seconds to wait. */
  hit(key: string): { ok: true } | { ok: false; retryAfterSeconds: number };
}

export interface RateLimitOptions {
  /** Requests allowed per window. Default 100. */
  limit?: number;
  /** Window length in milliseconds. Default 60,000. */
  windowMs?: number;
  now: () => number;
}

/**
 * A sliding-window rate limiter (section 8: 100 requests per 60 seconds per API key). Rejected
 * requests do not count, so a client that backs off gets through once the window slides.
 *
 * @example
 * const limiter = createRateLimiter({ now: clock.now });
 * const r = limiter.hit(keyHash);
 * if (!r.ok) return failure(429, 'slow down', { 'retry-after': String(r.retryAfterSeconds) });
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const limit = options.limit ?? 100;
  const windowMs = options.windowMs ?? 60_000;
  // Per key, the times of the counted requests, oldest first, from `head` on: the window slides by
  // moving `head` (amortised O(1) per request), not by copying the list, which made a raised limit
  // cost O(requests in the window) on every request.
  const hits = new Map<string, { times: number[]; head: number }>();
  return {
    hit(key) {
      const t = options.now();
      let entry = hits.get(key);
      if (!entry) hits.set(key, (entry = { times: [], head: 0 }));
      const { times } = entry;
      while (entry.head < times.length && !(times[entry.head]! > t - windowMs)) entry.head++;
      // Drop the expired prefix once it is at least half the list, so memory stays bounded by the window.
      if (entry.head > 0 && entry.head * 2 >= times.length) {
        times.splice(0, entry.head);
        entry.head = 0;
      }
      if (times.length - entry.head >= limit) {
        return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((times[entry.head]! + windowMs - t) / 1000)) };
      }
      times.push(t);
      return { ok: true };
    },
  };
}

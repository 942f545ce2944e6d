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
  const hits = new Map<string, number[]>();
  return {
    hit(key) {
      const t = options.now();
      const list = (hits.get(key) ?? []).filter((at) => at > t - windowMs);
      hits.set(key, list);
      if (list.length >= limit) {
        return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((list[0]! + windowMs - t) / 1000)) };
      }
      list.push(t);
      return { ok: true };
    },
  };
}

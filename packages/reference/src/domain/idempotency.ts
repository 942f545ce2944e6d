export interface StoredResponse {
  status: number;
  body: string;
}

export type IdempotencyLookup = { kind: 'new' } | { kind: 'replay'; response: StoredResponse } | { kind: 'conflict'; message: string };

export interface IdempotencyStore {
  /** What to do with a request carrying `key` in `scope` (merchant and mode) and this body fingerprint. */
  lookup(scope: string, key: string, fingerprint: string): IdempotencyLookup;
  /** Remember the response to replay it for the rest of the window. */
  save(scope: string, key: string, fingerprint: string, response: StoredResponse): void;
}

export interface IdempotencyOptions {
  /** How long a key is remembered. Default 24 hours. */
  windowMs?: number;
  now: () => number;
}

/**
 * The idempotency keys of initialize. A key comes back with its original response within the
 * window; the same key with a different body is a 409. Lookup and save run with no await in
 * between, so concurrent duplicates never see each other half done.
 *
 * @example
 * const seen = idempotency.lookup(scope, key, fingerprint);
 * if (seen.kind === 'replay') return new Response(seen.response.body, { status: seen.response.status });
 */
export function createIdempotencyStore(options: IdempotencyOptions): IdempotencyStore {
  const windowMs = options.windowMs ?? 24 * 60 * 60 * 1000;
  const entries = new Map<string, { fingerprint: string; response: StoredResponse; expiresAt: number }>();
  const id = (scope: string, key: string) => `${scope}\u0000${key}`;
  return {
    lookup(scope, key, fingerprint) {
      const t = options.now();
      for (const [k, e] of entries) if (e.expiresAt <= t) entries.delete(k);
      const entry = entries.get(id(scope, key));
      if (!entry) return { kind: 'new' };
      if (entry.fingerprint !== fingerprint) {
        return {
          kind: 'conflict',
          message: 'x-idempotency-key was already used with a different request body: use a new key for a new transaction.',
        };
      }
      return { kind: 'replay', response: entry.response };
    },
    save(scope, key, fingerprint, response) {
      entries.set(id(scope, key), { fingerprint, response, expiresAt: options.now() + windowMs });
    },
  };
}

/** JSON with keys sorted, so the same fields in another order are the same body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** An entry, and its neighbours in the recency ring. */
interface Link<K, V> {
  k: K;
  v: V;
  /** The entry used just before this one (older). */
  p: Link<K, V>;
  /** The entry used just after this one (newer). */
  n: Link<K, V>;
}

/**
 * A map of at most `max` entries that drops the least recently used first. `get` makes a key the
 * newest, `peek` does not; `set` makes its key the newest and, past `max`, drops the oldest.
 * `max` is a positive whole number, checked by the caller (whose error message names its option).
 *
 * A `Map` from key to entry, the entries in a ring from oldest to newest: every operation O(1).
 * Not a bare `Map` whose insertion order is the recency (`get` deletes and sets again): V8 keeps a
 * hole for each deleted entry until it rebuilds the table, and `keys().next()` steps over every
 * hole before the oldest, so a million claims at 100,000 keys took 37-44 s against lru-cache's 2;
 * and a `keys()` iterator kept across calls pins every table V8 replaces (175 MiB more heap after
 * 3 million `get`s at 100,000 keys).
 *
 * Ours rather than a library's (issue 54, cold start of a Worker): lru-cache 11.2.7 was 17.1 KiB
 * of `createReceiver`'s 89.7 KiB minified Worker bundle, and its constructor fills arrays for `max`
 * entries (10-14 ms for the store's default 100,000, on the first delivery); tiny-lru 13 is 5.8 KiB
 * minified. The store and the account book need only get/peek/set/delete under a count bound:
 * this, 0.7 KiB minified. No TTL, sizes, disposal or stale values.
 */
export class Lru<K, V> {
  readonly #map = new Map<K, Link<K, V>>();
  /** The ring's anchor, no entry: its `n` is the oldest entry, its `p` the newest (itself when empty). */
  readonly #root = link<K, V>(undefined as K, undefined as V);

  constructor(readonly max: number) {}

  /** The key's value, making it the newest. */
  get(key: K): V | undefined {
    const e = this.#map.get(key);
    if (e === undefined) return undefined;
    this.#toNewest(e);
    return e.v;
  }

  /** The key's value, its place in the order untouched. */
  peek(key: K): V | undefined {
    return this.#map.get(key)?.v;
  }

  /** Set the key's value and make it the newest; a new key past `max` drops the oldest. */
  set(key: K, value: V): this {
    const map = this.#map;
    const held = map.get(key);
    if (held !== undefined) {
      held.v = value;
      this.#toNewest(held);
      return this;
    }
    const root = this.#root;
    let e: Link<K, V>;
    if (map.size >= this.max) {
      // Full: the oldest entry goes, and its link carries the new key (no allocation once full).
      e = root.n;
      map.delete(e.k);
      e.k = key;
      e.v = value;
      this.#toNewest(e);
    } else {
      e = link(key, value);
      e.p = root.p;
      e.n = root;
      root.p.n = e;
      root.p = e;
    }
    map.set(key, e);
    return this;
  }

  /** Whether the key was held. */
  delete(key: K): boolean {
    const e = this.#map.get(key);
    if (e === undefined) return false;
    this.#map.delete(key);
    e.p.n = e.n;
    e.n.p = e.p;
    return true;
  }

  get size(): number {
    return this.#map.size;
  }

  #toNewest(e: Link<K, V>): void {
    const root = this.#root;
    if (root.p === e) return;
    e.p.n = e.n;
    e.n.p = e.p;
    e.p = root.p;
    e.n = root;
    root.p.n = e;
    root.p = e;
  }
}

/** A new entry, its own ring until it is linked in; one shape for every entry and the anchor. */
function link<K, V>(k: K, v: V): Link<K, V> {
  const e = { k, v, p: undefined, n: undefined } as unknown as Link<K, V>;
  e.p = e;
  e.n = e;
  return e;
}

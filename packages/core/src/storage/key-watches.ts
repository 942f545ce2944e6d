/**
 * A copy's watch on a key that another delivery is running (`onInProgress: 'wait'`): it is told
 * when the key's claim was completed or released, from any process sharing the store, instead of
 * asking the store again and again.
 */
export interface StoreWatch {
  /**
   * Resolves once the key changed (done, released) since the watch began or since the last
   * `changed()` resolved: at once if it already had. It may also resolve when the store can no
   * longer tell (its listening connection dropped), so that the copy looks again.
   */
  changed(): Promise<void>;
  /** Stop watching; a pending `changed()` never resolves. */
  stop(): void;
}

interface Watch extends StoreWatch {
  dirty: boolean;
  wake: (() => void) | undefined;
}

/** The watches of one store by key: its own writes, or the messages of other processes' writes, say which key changed. */
export interface KeyWatches {
  /** A watch on `key`, from now. */
  watch(key: string): StoreWatch;
  /** `key` was completed or released. */
  changed(key: string): void;
  /** Every key may have changed (a listening connection dropped, and messages with it). */
  all(): void;
  /** Keys with a watch: a store listens only while there are some. */
  readonly size: number;
}

/**
 * @example
 * const watches = keyWatches();
 * const w = watches.watch(key);
 * watches.changed(key); // from the store's complete, or a message from another process
 * await w.changed();
 */
export function keyWatches(): KeyWatches {
  const byKey = new Map<string, Set<Watch>>();
  const mark = (w: Watch) => {
    w.dirty = true;
    const wake = w.wake;
    w.wake = undefined;
    wake?.();
  };
  return {
    watch(key) {
      let set = byKey.get(key);
      if (set === undefined) byKey.set(key, (set = new Set()));
      const watchers = set;
      const w: Watch = {
        dirty: false,
        wake: undefined,
        changed: () =>
          new Promise<void>((resolve) => {
            if (w.dirty) {
              w.dirty = false;
              return resolve();
            }
            w.wake = () => {
              w.dirty = false;
              resolve();
            };
          }),
        stop() {
          w.wake = undefined;
          watchers.delete(w);
          if (watchers.size === 0 && byKey.get(key) === watchers) byKey.delete(key);
        },
      };
      watchers.add(w);
      return w;
    },
    changed(key) {
      const set = byKey.get(key);
      if (set !== undefined) for (const w of set) mark(w);
    },
    all() {
      for (const set of byKey.values()) for (const w of set) mark(w);
    },
    get size() {
      return byKey.size;
    },
  };
}

/**
 * The service's one source of time. The retry schedule, the delivery timeout, the rate limit, the
 * idempotency window and the cursor lifetime all read it, so a test can run the whole retry
 * schedule in milliseconds. Named apart from core's `Clock` (a different interface) so the two never
 * meet under one name.
 */
export interface ServiceClock {
  /** Milliseconds since the epoch, as the service sees them. */
  now(): number;
  /** Run `task` once the clock reaches `at`; returns a function that cancels it. */
  at(at: number, task: () => unknown): () => void;
  /**
   * Move time forward by `ms`, firing every timer that falls due, in order. Resolves once the
   * work those timers started (deliveries) has settled.
   */
  advance(ms: number): Promise<void>;
  /**
   * Register work in flight (a delivery attempt) so `advance` waits for it. `deadline` is the time
   * of the timer that ends it (its timeout): `advance` then waits only `graceMs` of real time for it,
   * and lets its timeout fire when due instead.
   */
  track<T>(work: Promise<T>, deadline?: number): Promise<T>;
  /** Stop the real-time timer; pending timers never fire. */
  close(): void;
}

/** `manual`: time moves only when advanced (tests). `real`: wall time plus what was advanced. */
export type ClockMode = 'manual' | 'real';

/** What `createClock` takes; every field has a default. */
export interface ClockOptions {
  /** `manual`: time moves only when advanced (tests). `real` (default): wall time plus what was advanced. */
  mode?: ClockMode;
  /** Start of a manual clock. Default: the wall time at creation. */
  startAt?: number;
  /** Real milliseconds `advance` lets tracked work finish before firing the timer that ends it. Default 1000. */
  graceMs?: number;
}

interface Timer {
  at: number;
  seq: number;
  task: () => unknown;
  cancelled: boolean;
}

/** The longest delay `setTimeout` takes without firing at once. */
const MAX_TIMEOUT = 2 ** 31 - 1;

/**
 * Create a clock. Timers sit in a binary heap ordered by due time, then by creation.
 *
 * @example
 * const clock = createClock({ mode: 'manual' });
 * clock.at(clock.now() + 60_000, () => console.log('a minute later'));
 * await clock.advance(60_000);
 */
export function createClock(options: ClockOptions = {}): ServiceClock {
  const mode = options.mode ?? 'real';
  let manualNow = options.startAt ?? Date.now();
  let offset = 0;
  let seq = 0;
  let closed = false;
  let handle: ReturnType<typeof setTimeout> | undefined;
  const heap: Timer[] = [];
  const inFlight = new Set<{ work: Promise<unknown>; deadline: number | undefined; graceEnds: number }>();
  const graceMs = options.graceMs ?? 1000;
  let advancing: Promise<void> = Promise.resolve();

  const now = () => (mode === 'manual' ? manualNow : Date.now() + offset);
  const shift = (ms: number) => {
    if (mode === 'manual') manualNow += ms;
    else offset += ms;
  };
  const before = (a: Timer, b: Timer) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

  function push(timer: Timer) {
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  function pop(): Timer | undefined {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }

  function peek(): Timer | undefined {
    while (heap[0]?.cancelled) pop();
    return heap[0];
  }

  function fire(timer: Timer) {
    try {
      const result = timer.task();
      if (result instanceof Promise) void clock.track(result);
    } catch {
      // A timer's task reports its own errors; one failing task must not stop the others.
    }
  }

  function fireDue() {
    for (let t = peek(); t && t.at <= now(); t = peek()) fire(pop()!);
  }

  // Real mode: one setTimeout for the earliest timer, re-armed whenever the earliest changes.
  function arm() {
    if (mode !== 'real' || closed) return;
    if (handle) clearTimeout(handle);
    handle = undefined;
    const next = peek();
    if (!next) return;
    handle = setTimeout(
      () => {
        fireDue();
        arm();
      },
      Math.min(MAX_TIMEOUT, Math.max(0, next.at - now())),
    );
    handle.unref?.();
  }

  /**
   * Wait for work in flight. Work that a timer can end (it has a deadline) gets `graceMs` of real
   * time from its start: a local receiver answers in milliseconds, and a hung one must not hold
   * virtual time back (its timeout is a timer of this very clock). Other work is waited for fully.
   */
  async function quiesce() {
    // Work that settles within a few microtasks (an attempt failed by a sandbox fault) is waited for
    // without a real-time timer: at 100,000 retries the timers cost more than the attempts.
    for (let tick = 0; tick < 8 && inFlight.size > 0; tick++) await undefined;
    for (;;) {
      const waits: Promise<unknown>[] = [];
      // One real-time timer for the soonest grace end (not one per piece of work): when it fires,
      // the loop runs again and the work whose grace is over is no longer waited for.
      let soonest = Infinity;
      for (const w of inFlight) {
        if (w.deadline === undefined) {
          waits.push(w.work);
          continue;
        }
        const left = w.graceEnds - performance.now();
        if (left > 0) {
          waits.push(w.work);
          if (left < soonest) soonest = left;
        }
      }
      if (waits.length === 0) return;
      if (soonest === Infinity) {
        await Promise.race(waits);
        continue;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      waits.push(new Promise((r) => (timer = setTimeout(r, soonest))));
      await Promise.race(waits);
      clearTimeout(timer);
    }
  }

  const clock: ServiceClock = {
    now,
    at(at, task) {
      const timer: Timer = { at, seq: seq++, task, cancelled: false };
      push(timer);
      if (heap[0] === timer) arm();
      return () => {
        timer.cancelled = true;
      };
    },
    advance(ms) {
      if (!(Number.isFinite(ms) && ms >= 0)) {
        return Promise.reject(new RangeError(`[@payhook/reference] advance(ms) takes a finite number of milliseconds >= 0; got ${ms}.`));
      }
      // Advances run one after another, so two callers never interleave their timers.
      const run = advancing.then(async () => {
        const target = now() + ms;
        for (;;) {
          await quiesce();
          const next = peek();
          if (!next || next.at > target) break;
          if (next.at > now()) shift(next.at - now());
          fire(pop()!);
        }
        if (target > now()) shift(target - now());
        await quiesce();
        arm();
      });
      advancing = run.catch(() => {});
      return run;
    },
    track(work, deadline) {
      const entry = {
        work: work.then(
          () => {},
          () => {},
        ),
        deadline,
        graceEnds: performance.now() + graceMs,
      };
      inFlight.add(entry);
      void entry.work.then(() => inFlight.delete(entry));
      return work;
    },
    close() {
      closed = true;
      if (handle) clearTimeout(handle);
      heap.length = 0;
    },
  };
  return clock;
}

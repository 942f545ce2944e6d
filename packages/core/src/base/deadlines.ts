import type { Clock } from './clock.js';

/** A delivery's place in the queue; `late` is cleared when the delivery settles first. */
export interface Deadline {
  at: number;
  late: (() => void) | null;
  /** Its own timer, where each delivery has one (`ownTimers`). */
  timer?: unknown;
}

export interface Deadlines {
  /** Call `late` at `at` (clock time) unless `cancel` comes first. */
  add(at: number, late: () => void): Deadline;
  cancel(deadline: Deadline): void;
}

/**
 * One timer for all of a receiver's deliveries, instead of a timer and a `Promise.race` each.
 * Deadlines are kept in order of `at`; as every delivery has the same budget they arrive almost in
 * order, so an insert is nearly always a push. One clock timer is armed for the earliest live one.
 */
export function createDeadlines(clock: Clock): Deadlines {
  const queue: Deadline[] = [];
  let head = 0;
  let armedAt = Infinity;
  let handle: unknown;

  const fire = () => {
    armedAt = Infinity;
    const t = clock.now();
    while (head < queue.length && queue[head]!.at <= t) {
      const d = queue[head++]!;
      const late = d.late;
      d.late = null;
      late?.();
    }
    compact();
    arm();
  };
  // Skip settled deadlines at the front; drop the consumed prefix once it is most of the array.
  const compact = () => {
    while (head < queue.length && queue[head]!.late === null) head++;
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
    } else if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
  };
  const arm = () => {
    if (head >= queue.length) return;
    const at = queue[head]!.at;
    if (at >= armedAt) return;
    if (armedAt !== Infinity) clock.clearTimeout(handle);
    armedAt = at;
    handle = clock.setTimeout(fire, Math.max(0, at - clock.now()));
  };

  return {
    add(at, late) {
      const d: Deadline = { at, late };
      let i = queue.length;
      while (i > head && queue[i - 1]!.at > at) i--;
      if (i === queue.length) queue.push(d);
      else queue.splice(i, 0, d);
      arm();
      return d;
    },
    cancel(d) {
      d.late = null;
      // A timer left armed for a settled deadline fires once, finds nothing, and stops.
      if (queue[head] === d) compact();
    },
  };
}

/**
 * A timer per delivery, for platforms that cancel a request's timers once it is answered
 * (workerd): there, one timer shared by all deliveries dies with the request that armed it, and
 * the next delivery's budget never fires.
 */
export function ownTimers(clock: Clock): Deadlines {
  return {
    add(at, late) {
      const d: Deadline = { at, late };
      d.timer = clock.setTimeout(
        () => {
          d.late = null;
          late();
        },
        Math.max(0, at - clock.now()),
      );
      return d;
    },
    cancel(d) {
      d.late = null;
      clock.clearTimeout(d.timer);
    },
  };
}

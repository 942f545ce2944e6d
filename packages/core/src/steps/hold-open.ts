type WaitUntil = (work: Promise<unknown>) => void;

const noop = () => {};

/**
 * Ask the platform, at once and from inside the request, to wait for this delivery: Next's
 * `after()` and Vercel's `waitUntil` find their request through AsyncLocalStorage, and the
 * receiver's one deadline timer runs in whichever request's context armed it, so a hook called
 * from there could attach the work to another request or to none. What is held settles when the
 * answer goes out with nothing left to do, or when the work handed over at the budget ends.
 * A hook that throws (called outside a request) holds nothing: the delivery goes on as without one.
 */
export function holdOpen(waitUntil: WaitUntil): { handOver: WaitUntil | undefined; release: () => void } {
  let settle: (work?: Promise<unknown>) => void = noop;
  const held = new Promise<unknown>((resolve) => (settle = resolve));
  try {
    waitUntil(held.then(noop, noop));
  } catch {
    return { handOver: undefined, release: noop };
  }
  let handed = false;
  return {
    handOver: (work) => {
      handed = true;
      settle(work.then(noop, noop));
    },
    release: () => {
      if (!handed) settle();
    },
  };
}

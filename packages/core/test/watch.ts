/** A promise and whether it has settled yet: what has not happened by a point in virtual time. */
export function watch<T>(promise: Promise<T>) {
  const w = { settled: false, promise };
  const settled = () => void (w.settled = true);
  promise.then(settled, settled);
  return w;
}

// In-process V8 CPU profile of an async function (node:inspector), self time grouped by function
// and by package, for the "what bounds it" notes of the benchmarks.
import { Session } from 'node:inspector';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** `global.gc` without having to start Node with --expose-gc. */
export function exposeGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc');
}

export async function profile(fn, intervalUs = 200) {
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: intervalUs });
  await post('Profiler.start');
  await fn();
  const { profile: p } = await post('Profiler.stop');
  session.disconnect();
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const fns = new Map();
  const pkgs = new Map();
  let total = 0;
  p.samples.forEach((id, i) => {
    const { callFrame: f } = byId.get(id);
    if (f.functionName === '(idle)') return;
    const dt = p.timeDeltas[i] ?? 0;
    const where = f.url
      .replace(/^file:\/\//, '')
      .replace(/.*\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, '')
      .replace(/.*\/work\/main\//, '');
    const key = `\`${f.functionName || '(anonymous)'}\` ${where ? `${where}:${f.lineNumber + 1}` : '(native)'}`;
    fns.set(key, (fns.get(key) ?? 0) + dt);
    const pkg = !where
      ? f.functionName.startsWith('(')
        ? f.functionName
        : 'native (V8/C++)'
      : where.startsWith('node:')
        ? where
        : where.startsWith('packages/')
          ? where.split('/').slice(0, 2).join('/')
          : where
              .split('/')
              .slice(0, where.startsWith('@') ? 2 : 1)
              .join('/');
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + dt);
    total += dt;
  });
  const top = (m, n) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, t]) => ({ what: k, share: t / total }));
  return { functions: top(fns, 15), packages: top(pkgs, 12), totalMs: total / 1000 };
}

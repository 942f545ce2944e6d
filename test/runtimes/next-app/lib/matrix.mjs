// One matrix app per runtime and server process, made on the first request: `next build` loads
// the routes with no secret in its environment.
import { matrixReceiver, runsAnswer } from './matrix-app.mjs';

export { runsAnswer };

const apps = (globalThis[Symbol.for('payhook.matrix.apps')] ??= new Map());

export function matrixApp(runtime) {
  let app = apps.get(runtime);
  if (!app) {
    const secret = process.env.MATRIX_WEBHOOK_SECRET;
    if (!secret) throw new Error('[payhook tests] MATRIX_WEBHOOK_SECRET is not set for next start');
    apps.set(runtime, (app = matrixReceiver({ secret })));
  }
  return app;
}

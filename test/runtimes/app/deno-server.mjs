// The matrix app on Deno's own server, through the web-standard entry.
import { matrixFetch, matrixReceiver, upstashFrom } from './matrix-app.mjs';

// Only the two variables it is allowed to read (--allow-env names them).
const env = { PAYHOOK_UPSTASH_URL: Deno.env.get('PAYHOOK_UPSTASH_URL'), PAYHOOK_UPSTASH_TOKEN: Deno.env.get('PAYHOOK_UPSTASH_TOKEN') };
const fetch = matrixFetch(matrixReceiver(upstashFrom(env)));
Deno.serve(
  { port: 0, hostname: '127.0.0.1', onListen: ({ port }) => console.log(`listening ${port} deno ${Deno.version.deno}`) },
  (request) => fetch(request),
);

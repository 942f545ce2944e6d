// The matrix app on Deno's own server, through the web-standard entry.
import { matrixFetch, matrixReceiver } from './matrix-app.mjs';

const fetch = matrixFetch(matrixReceiver());
Deno.serve(
  { port: 0, hostname: '127.0.0.1', onListen: ({ port }) => console.log(`listening ${port} deno ${Deno.version.deno}`) },
  (request) => fetch(request),
);

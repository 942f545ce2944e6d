// The matrix app on Bun's own server, through the web-standard entry.
import { matrixFetch, matrixReceiver, upstashFrom } from './matrix-app.mjs';

const fetch = matrixFetch(matrixReceiver(upstashFrom(process.env)));
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => fetch(request) });
console.log(`listening ${server.port} bun ${Bun.version}`);

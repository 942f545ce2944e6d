import http from 'node:http';
import { createApp } from './app.js';
import { createPlatform } from './platform.js';

const platform = createPlatform();
const server = http.createServer(createApp(platform));
// An endpoint on the public internet: trickling clients are cut off well before they tie a socket up.
server.headersTimeout = 10_000;
server.requestTimeout = 15_000;
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
server.listen(port, host, () => console.log(`[platform] listening on http://${host}:${port}`));
const stop = () => server.close(() => (platform.close(), process.exit(0)));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

// The reference service for the initialize benchmark, in its own process:
// `node bench/reference/server.mjs` prints `{"url":..., "apiKey":...}` once it listens on 127.0.0.1:0.
// The rate limit is raised (100 per 60 s is the spec's; the bench sends thousands per second).
import { createReferenceService } from '@payhook/reference';

process.on('SIGTERM', () => process.exit(0));
const service = createReferenceService({ rateLimit: { limit: 1e9 }, onError: (e) => console.error(e) });
const running = await service.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ url: running.url, apiKey: service.generated.apiKey, pid: process.pid })}\n`);

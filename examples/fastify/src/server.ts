import { createShop } from '@payhook/example-shop';
import { address, announce, stopOnSignal } from '@payhook/example-shop/listen';
import { createApp } from './app.js';

const shop = createShop();
const app = await createApp(shop);
const { port, host } = address();
await app.listen({ port, host });
announce('fastify', (app.server.address() as { port: number }).port, host);
stopOnSignal(() => app.close(), shop);

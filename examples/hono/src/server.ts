import { getRequestListener } from '@hono/node-server';
import { createShop } from '@payhook/example-shop';
import { serve } from '@payhook/example-shop/listen';
import { createApp } from './app.js';

const shop = createShop();
serve('hono', getRequestListener(createApp(shop).fetch), shop);

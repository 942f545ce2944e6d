import { createShop } from '@payhook/example-shop';
import { serve } from '@payhook/example-shop/listen';
import { createApp } from './app.js';

const shop = createShop();
serve('express', createApp(shop), shop);

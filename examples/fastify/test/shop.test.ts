import { shopContract } from '../../shop/test/contract.js';
import { createApp } from '../src/app.js';

// createApp is async (it registers the payhook plugin); the contract awaits it and closes the app.
shopContract('fastify', createApp);

import { shopContract } from '../../shop/test/contract.js';
import { createApp } from '../src/app.js';

shopContract('express', createApp);

import { memoryStore } from '@payhook/core';
import { storeConformance } from './store-conformance.js';

storeConformance('memory', { make: () => memoryStore(), shared: false });

import { beforeAll } from 'vitest';
import { adapterConformance } from './adapter-conformance.js';
import { buildNextApp, startNextApp } from './next-server.js';

// One `next build` of next-app/ for both routers; each suite then runs `next start` on it.
beforeAll(buildNextApp, 240_000);

adapterConformance('next app router', {
  start: (logFile, signatureHeader) => startNextApp(logFile, '/api/webhooks', undefined, signatureHeader),
  parserFirst: {
    // The App Router has no body parser; the same mistake is reading the request before payhook.
    start: (logFile) => startNextApp(logFile, '/api/read-first', '/api/echo'),
    expect: { fix: /^\[@payhook\/next\] the request stream was already read.*App Router, do not read the request/ },
  },
});

adapterConformance('next pages router', {
  start: (logFile, signatureHeader) => startNextApp(logFile, '/api/pages-webhooks', undefined, signatureHeader),
  parserFirst: {
    start: (logFile) => startNextApp(logFile, '/api/pages-parsed', '/api/pages-echo'),
    expect: { fix: /^\[@payhook\/next\] a body parser already parsed the request.*bodyParser: false/ },
  },
});

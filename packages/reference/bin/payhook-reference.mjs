#!/usr/bin/env node
// Checked in rather than built, so that installing the workspace links it before any build
// (pnpm warns "Failed to create bin" for a bin whose file does not exist yet).
import '../dist/cli.js';

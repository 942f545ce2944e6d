#!/usr/bin/env node
// Checked in rather than built, so that installing the workspace links it before any build.
import { run } from '../dist/cli.js';

run(process.argv.slice(2));

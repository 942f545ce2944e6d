// The run's last lines (issue 57): every suite that skipped because Redis, PostgreSQL or Chromium
// was missing, and a closing count, so that a green run with skipped service suites says so.
import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { SKIP_LINE } from './skipped.js';

interface Skip {
  what: string;
  service: string;
  why: string;
}

export default class SkippedServicesReporter implements Reporter {
  private vitest: Vitest | undefined;
  /** Per test file, what it said it skipped. */
  private readonly skips = new Map<string, Skip[]>();

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onUserConsoleLog(log: { content: string; taskId?: string }): void {
    const match = SKIP_LINE.exec(log.content);
    if (match === null) return;
    const task = log.taskId === undefined ? undefined : this.vitest?.state.idMap.get(log.taskId);
    const file = task?.file?.filepath ?? 'a test file';
    const [, what, service, why] = match;
    this.skips.set(file, [...(this.skips.get(file) ?? []), { what: what!, service: service!, why: why! }]);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let skipped = 0;
    const skippedIn = new Map<string, number>();
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed += 1;
        if (state === 'skipped') {
          skipped += 1;
          skippedIn.set(m.moduleId, (skippedIn.get(m.moduleId) ?? 0) + 1);
        }
      }
    }
    const root = this.vitest?.config.root ?? process.cwd();
    const count = (n: number) => n.toLocaleString('en-US');
    const services = [...new Set([...this.skips.values()].flat().map((s) => s.service))].sort();
    const out: string[] = [];
    if (services.length > 0) {
      out.push('', '[payhook] suites skipped for want of a service (they did not run: this run is not the whole suite):');
      for (const [file, skips] of this.skips) {
        const tests = skippedIn.get(file) ?? 0;
        const what = [...new Set(skips.map((s) => `${s.what} (${s.service})`))].join('; ');
        out.push(`  ${relative(root, file)}: ${count(tests)} skipped: ${what}`);
      }
      const why = [...new Set([...this.skips.values()].flat().map((s) => `${s.service}: ${s.why}`))];
      for (const line of why) out.push(`  ${line}`);
      out.push(
        `[payhook] ${count(passed)} passed, ${count(skipped)} skipped: ${joined(services)} unavailable. Run scripts/prepare-machine.sh (as root it installs them; otherwise it prints the command), or set PAYHOOK_REQUIRE_SERVICES=1 to fail instead.`,
      );
    } else {
      out.push(`[payhook] ${count(passed)} passed, ${count(skipped)} skipped; no suite skipped for want of Redis, PostgreSQL or Chromium.`);
    }
    process.stdout.write(`${out.join('\n')}\n`);
  }
}

const joined = (names: string[]) => (names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`);

// Type-checks the samples as an app would compile them: each block its own module in a project
// whose node_modules/@payhook/* are the workspace's packages, read through their `exports` (their
// built dist/), all blocks in one TypeScript program.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import type { Sample } from './extract.js';
import { preludeDeclarations } from './prelude.js';

const here = import.meta.dirname;
const formatHost: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => here, getNewLine: () => '\n' };

/** Where a library the guides import is installed, when not at the workspace's root: name -> the folder holding its node_modules entry. */
const INSTALLED: Record<string, string> = { winston: 'packages/core/node_modules' };

/** A project of the samples: a folder under the repository's ignored tmp/ (so the workspace's node_modules resolve above it). */
export interface SampleProject {
  dir: string;
  /** The module file of each sample, in the order given. */
  files: string[];
}

/**
 * The tsconfig.json of an app on Node 20: strict, ESM with top-level await, the packages as their
 * `exports` give them. Written into the project, where `tsx` reads it too (not the workspace's,
 * whose paths point at the packages' sources).
 */
export const compilerOptions = {
  target: 'es2022',
  module: 'esnext',
  moduleResolution: 'bundler',
  moduleDetection: 'force',
  jsx: 'react-jsx',
  strict: true,
  types: ['node'],
  skipLibCheck: true,
  esModuleInterop: true,
  noEmit: true,
  // Next's samples import the app's own module by Next's default alias.
  paths: { '@/*': [join(here, 'next/*')] },
};

/** Writes each sample to its own module, beside node_modules/@payhook/* linked to the workspace's packages. */
export function writeProject(root: string, samples: Sample[]): SampleProject {
  const missing = readdirSync(join(root, 'packages')).filter((name) => !existsSync(join(root, 'packages', name, 'dist')));
  if (missing.length > 0)
    throw new Error(`the samples are checked against the built packages: run pnpm build (no dist/ in ${missing.join(', ')})`);
  mkdirSync(join(root, 'tmp'), { recursive: true });
  const dir = mkdtempSync(join(root, 'tmp', 'docs-samples-'));
  mkdirSync(join(dir, 'node_modules', '@payhook'), { recursive: true });
  for (const name of readdirSync(join(root, 'packages')))
    symlinkSync(join(root, 'packages', name), join(dir, 'node_modules', '@payhook', name), 'dir');
  // Libraries a guide shows that the workspace installs for one package only, not at its root.
  for (const [name, from] of Object.entries(INSTALLED)) symlinkSync(join(root, from, name), join(dir, 'node_modules', name), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'docs-samples', private: true, type: 'module' }));
  writeFileSync(join(dir, 'prelude.d.ts'), preludeDeclarations(join(here, 'prelude.js')));
  const files = samples.map((sample) => {
    const file = join(dir, `${sample.file.replace(/[/.]/g, '_')}_${sample.line}.${sample.lang}`);
    writeFileSync(file, sample.code);
    return file;
  });
  const names = ['prelude.d.ts', ...files.map((file) => relative(dir, file))];
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: names }, null, 2));
  return { dir, files };
}

/** One diagnostic, placed in the Markdown: `docs/guides/x.md:12:5 TS2304 Cannot find name 'foo'.` */
export interface Problem {
  /** The sample it belongs to, or undefined for the prelude's and the packages' own files. */
  sample?: Sample;
  text: string;
}

/** Compiles every sample in one program and places each diagnostic at its line of the Markdown. */
export function typeCheck(project: SampleProject, samples: Sample[]): Problem[] {
  const { options, errors } = ts.convertCompilerOptionsFromJson(compilerOptions, project.dir);
  if (errors.length > 0) throw new Error(ts.formatDiagnostics(errors, formatHost));
  const program = ts.createProgram({ rootNames: [join(project.dir, 'prelude.d.ts'), ...project.files], options });
  const byFile = new Map(project.files.map((file, i) => [file, samples[i]!]));
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
    if (!d.file || d.start === undefined) return { text: `TS${d.code} ${message}` };
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    const sample = byFile.get(d.file.fileName);
    if (!sample) return { text: `${d.file.fileName}:${line + 1}:${character + 1} TS${d.code} ${message}` };
    return { sample, text: `${sample.file}:${sample.line + 1 + line}:${character + 1} TS${d.code} ${message}` };
  });
}

// The `serve --state` file on disk: written privately and never through a link, read only when it is safe to.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { setupSignatureHeader } from '../src/cli/serve-setup.js';
import {
  createStateSaver,
  MAX_STATE_BYTES,
  readStateFile,
  StateFileError,
  stateText,
  writeStateFile,
  type StateFile,
} from '../src/state/state-file.js';

// randomBytes as it is, except when a test fixes it to know the temporary file's name in advance.
const fixed = vi.hoisted(() => ({ bytes: null as Buffer | null }));
vi.mock('node:crypto', async (original) => {
  const actual = await original<typeof import('node:crypto')>();
  return { ...actual, randomBytes: (...args: Parameters<typeof actual.randomBytes>) => fixed.bytes ?? actual.randomBytes(...args) };
});

const state: StateFile = {
  merchants: [{ id: 'm', apiKeys: [{ sha256: 'a'.repeat(64), mode: 'sandbox' }], webhookSecret: 'whsec_the_secret' }],
  clockOffsetMs: 0,
  transactions: [],
  deliveries: [],
};
const DEEP = 100_000;
const deep = `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`;

/** A shared directory holding the state file, and another one holding the file an attacker aims at. */
function dirs() {
  const shared = mkdtempSync(join(tmpdir(), 'payhook-shared-'));
  chmodSync(shared, 0o777); // world-writable and not sticky, as the report had it
  const elsewhere = mkdtempSync(join(tmpdir(), 'payhook-victim-'));
  const victim = join(elsewhere, 'victim.txt');
  writeFileSync(victim, 'the victim', { mode: 0o644 });
  return { file: join(shared, 'state.json'), shared, victim };
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe('writing the state file', () => {
  it('goes through a new private file, never through a link planted at the old predictable name', () => {
    const { file, shared, victim } = dirs();
    symlinkSync(victim, `${file}.${process.pid}.tmp`);
    writeFileSync(file, 'an older state', { mode: 0o644 });
    writeStateFile(file, stateText(state));
    expect(readFileSync(victim, 'utf8')).toBe('the victim');
    expect(lstatSync(file).isFile()).toBe(true);
    expect(mode(file)).toBe(0o600);
    expect(readStateFile(file)).toEqual(state);
    // Nothing left beside it but the planted link, untouched.
    expect(readdirSync(shared).sort()).toEqual(['state.json', `state.json.${process.pid}.tmp`]);
    expect(readlinkSync(`${file}.${process.pid}.tmp`)).toBe(victim);
  });

  it('refuses a link at the temporary name it drew (O_EXCL), and leaves both the link and the state file alone', () => {
    const { file, victim } = dirs();
    writeFileSync(file, 'the saved state');
    fixed.bytes = Buffer.alloc(12, 0xab);
    try {
      const temp = `${file}.${'ab'.repeat(12)}.tmp`;
      symlinkSync(victim, temp);
      expect(() => writeStateFile(file, stateText(state))).toThrow(/EEXIST/);
      expect(readlinkSync(temp)).toBe(victim);
    } finally {
      fixed.bytes = null;
    }
    expect(readFileSync(victim, 'utf8')).toBe('the victim');
    expect(readFileSync(file, 'utf8')).toBe('the saved state');
  });

  it('refuses a state file that is a link, rather than replace the link or write through it', () => {
    const { file, victim } = dirs();
    symlinkSync(victim, file);
    expect(() => writeStateFile(file, stateText(state))).toThrow(StateFileError);
    expect(() => writeStateFile(file, stateText(state))).toThrow(`the state file ${file} is a symbolic link to ${victim}`);
    const saver = createStateSaver(
      file,
      () => state,
      () => {},
    );
    expect(saver.flush()).toMatch(
      /is a symbolic link .*Pass the file itself with --state, or remove the link\. Changes are kept in memory meanwhile\.$/,
    );
    expect(readFileSync(victim, 'utf8')).toBe('the victim');
    expect(readlinkSync(file)).toBe(victim);
    // Read, it is refused the same way, a dangling link too.
    expect(() => readStateFile(file)).toThrow(/is a symbolic link/);
    symlinkSync(join(victim, 'none'), `${file}.2`);
    expect(() => readStateFile(`${file}.2`)).toThrow(/is a symbolic link/);
  });

  it('is private whatever the file was before, and fails without leaving a temporary file behind', () => {
    const { file, shared } = dirs();
    createStateSaver(
      file,
      () => state,
      () => {},
    ).flush();
    expect(mode(file)).toBe(0o600);
    const dir = join(shared, 'a-directory');
    mkdirSync(dir);
    expect(() => writeStateFile(dir, '{}')).toThrow(/is not a regular file/);
    expect(() => writeStateFile(join(shared, 'missing', 'state.json'), '{}')).toThrow(/ENOENT/);
    expect(readdirSync(shared).sort()).toEqual(['a-directory', 'state.json']);
  });
});

describe('reading the state file', () => {
  const refused = (content: string, says: RegExp) => {
    const { file } = dirs();
    writeFileSync(file, content);
    expect(() => readStateFile(file)).toThrow(StateFileError);
    expect(() => readStateFile(file)).toThrow(says);
    expect(readFileSync(file, 'utf8')).toBe(content);
  };
  const good = JSON.parse(stateText(state)) as Record<string, unknown>;

  it('refuses deep nesting before parsing it, wherever it is', () => {
    refused(deep, /nests arrays or objects deeper than 32 levels.*move it away to start afresh/);
    refused(stateText(state).replace('"webhookSecret"', `"extra": ${deep}, "webhookSecret"`), /deeper than 32 levels/);
    refused(
      JSON.stringify({ ...good, transactions: [{ timeline: [JSON.parse('['.repeat(40) + ']'.repeat(40))] }] }),
      /deeper than 32 levels/,
    );
    // Brackets inside strings are text, not nesting.
    const { file } = dirs();
    writeFileSync(file, stateText({ ...state, merchants: [{ ...state.merchants[0]!, name: `"[{\\"${'['.repeat(100)}` }] }));
    expect(readStateFile(file)!.merchants[0]!.name).toBe(`"[{\\"${'['.repeat(100)}`);
  });

  it('refuses a file too large, not a file, not an object, or holding values the service could not have written', () => {
    const { file, shared } = dirs();
    // A sparse file: its size is refused before a byte is read.
    writeFileSync(file, '');
    truncateSync(file, MAX_STATE_BYTES + 1);
    expect(() => readStateFile(file)).toThrow(/is larger than 256 MiB, more than the service ever writes: fix it, or move it away/);
    expect(() => readStateFile(shared)).toThrow(/is not a regular file/);
    refused('[]', /is not a payhook-reference state file \(Invalid input: expected object, received array\)/);
    refused('"state"', /expected object/);
    refused(JSON.stringify({ ...good, clockOffsetMs: 1e300 }), /at clockOffsetMs \(the clock offset must be at most 100 years\)/);
    const tx = {
      seq: 1,
      reference: 'PAAAAAAAA20260813',
      merchantId: 'm',
      mode: 'sandbox',
      status: 'pending',
      createdAt: 1e300,
      timeline: [],
    };
    refused(JSON.stringify({ ...good, transactions: [tx] }), /at transactions\.0\.createdAt/);
    refused(JSON.stringify({ ...good, signatureHeader: 'X Epay' }), /at signatureHeader \("signatureHeader" must be an HTTP header name/);
  });
});

describe('the signature header kept in the state file', () => {
  it('the flag wins and is saved; without it the saved one; without either the interface default', () => {
    const saved = { ...state, signatureHeader: 'X-Epay-Signature' };
    expect(setupSignatureHeader(undefined, saved)).toEqual({
      header: 'X-Epay-Signature',
      shown: '  signed in       X-Epay-Signature (kept in the state file)',
    });
    expect(setupSignatureHeader('X-Service-Signature', saved).shown).toBe(
      '  signed in       X-Service-Signature (--signature-header; the state file said X-Epay-Signature, now saved)',
    );
    expect(setupSignatureHeader('x-epay-signature', saved).shown).toBe('  signed in       x-epay-signature');
    expect(setupSignatureHeader(undefined, null).header).toBe('X-Service-Signature');
    expect(setupSignatureHeader(undefined, state).header).toBe('X-Service-Signature');
    // A file saved before the header was kept: its deliveries say which header signed them.
    const older = { ...state, deliveries: [{ signatureHeader: 'x-epay-signature' }] } as unknown as StateFile;
    expect(setupSignatureHeader(undefined, older).header).toBe('x-epay-signature');
    expect(() => setupSignatureHeader('X Epay', saved)).toThrow(/--signature-header must be an HTTP header name/);
  });
});

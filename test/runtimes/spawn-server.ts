import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface Started {
  origin: string;
  /** What the server printed after its port: its runtime and version. */
  banner: string;
  close(): Promise<void>;
}

/**
 * Start a server in another runtime and wait for its `listening <port> <banner>` line (20 s at
 * most); the error carries everything it printed.
 */
export async function startServer(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Started> {
  if (!existsSync(command)) throw new Error(`[payhook tests] ${command} is missing: run \`npx -y pnpm@10.34.8 install\`.`);
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`[payhook tests] ${command} did not listen within 20 s:\n${output}`)), 20_000);
    const read = (chunk: Buffer) => {
      output += chunk;
      const line = /listening (\d+) (.*)/.exec(output);
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`[payhook tests] ${command} exited before listening:\n${output}`));
    });
  });
  return {
    origin: `http://127.0.0.1:${ready[1]}`,
    banner: ready[2]!.trim(),
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

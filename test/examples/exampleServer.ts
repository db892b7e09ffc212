import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

const tsx = createRequire(import.meta.url).resolve('tsx/cli');

/** An example server started as a child process, with what it printed so far. */
export interface ExampleServer {
  readonly url: string;
  readonly child: ChildProcess;
  readonly output: string[];
}

/**
 * Starts `file` (an example that prints `listening on http://…`) with `env`; resolves once it listens.
 * Every child is added to `children`, so the test's `afterAll` can kill what is left however it ended.
 */
export function startExample(file: string, env: NodeJS.ProcessEnv, children: Set<ChildProcess>, timeoutMs = 60_000): Promise<ExampleServer> {
  const child = spawn(process.execPath, [tsx, file], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start:\n${output.join('')}`)), timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      output.push(chunk.toString());
      const url = /listening on (http:\/\/\S+)/.exec(output.join(''))?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        resolve({ url, child, output });
      }
    });
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`${file} exited (${code}):\n${output.join('')}`))));
  });
}

/** Stops a server with SIGTERM; resolves once it exited. */
export const stopExample = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))));

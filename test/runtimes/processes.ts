import { spawn } from 'node:child_process';

/** What a runtime's process wrote, and how it ended. */
export interface Finished {
  readonly stdout: string;
  readonly stderr: string;
  /** The exit code; null when a signal ended it (the time limit's SIGKILL among them). */
  readonly code: number | null;
  readonly timedOut: boolean;
}

/**
 * Runs `file` with `args` to its end, or kills it (its whole process group: workerd under miniflare,
 * a runtime's helpers) once `timeoutMs` passed. Never rejects for how the process ended: the caller
 * reads `code`, `timedOut` and what it wrote, to say what went wrong in the runtime's own words.
 *
 * @example
 * ```ts
 * const { stdout, code } = await runProcess(node22, ['run.mjs'], { cwd: dir, timeoutMs: 60_000 });
 * ```
 */
export function runProcess(file: string, args: readonly string[], options: { readonly cwd: string; readonly timeoutMs: number; readonly env?: NodeJS.ProcessEnv }): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ stdout, stderr: `${stderr}${error.message}`, code: null, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      kill(); // whatever it started and left behind in its group
      resolve({ stdout, stderr, code, timedOut });
    });
  });
}

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * Every `example:*` script and `npm start`, as on a fresh clone: no API keys, no REDIS_URL, no
 * terminal. Each exits 0, or fails fast saying what to set or start, within a generous ceiling (the
 * machine may be loaded), and leaves no process of its own behind.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const { scripts } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> };

/** The ceiling for one script: far above what it takes on an idle machine (5–10 s). */
const CEILING_MS = 60_000;

/** What each script prints when it worked; a script not listed must exit 0 or say what to set or start. */
const expected: Record<string, RegExp> = {
  start: /7 calls: 5 ok, 2 denied/,
  'example:first-run': /done: 9 results \(5 ok, 3 error, 1 denied\)/,
  'example:ptc': /the escape attempt ended as: denied/,
};
/** Covered elsewhere: without Redis the fleet example fails fast naming the address (test/fleet, helper F's part). */
const elsewhere = new Set(['example:fleet']);
const names = Object.keys(scripts).filter((name) => (name === 'start' || name.startsWith('example:')) && !elsewhere.has(name));

interface Ran {
  readonly code: number | null;
  readonly output: string;
  /** Whether the ceiling ended it. */
  readonly killed: boolean;
  /** Processes of its group still alive a while after it exited (then killed). */
  readonly leftover: boolean;
}

/** `npm run <script>` in a process group of its own, without keys, Redis or a terminal. */
async function runScript(name: string): Promise<Ran> {
  const env = { ...process.env };
  for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'REDIS_URL']) delete env[key];
  const child = spawn('npm', ['run', '--silent', name], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const group = child.pid!;
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let killed = false;
  const ceiling = setTimeout(() => {
    killed = true;
    killGroup(group);
  }, CEILING_MS);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(ceiling);
  // Whatever the script started in its group has a moment to wind down, then counts as left behind.
  let leftover = groupAlive(group);
  for (let waited = 0; leftover && waited < 5_000; waited += 100) {
    await sleep(100);
    leftover = groupAlive(group);
  }
  if (leftover) killGroup(group);
  return { code, output, killed, leftover };
}

function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

function killGroup(group: number): void {
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // already gone
  }
}

describe('the scripts on a fresh clone: no keys, no Redis', () => {
  it('covers every example script but the fleet', () => {
    expect(names).toEqual(expect.arrayContaining(Object.keys(expected)));
  });

  it.each(names)('npm run %s exits 0, or fails fast saying what to set or start, and leaves nothing behind', async (name) => {
    const ran = await runScript(name);
    expect(ran.killed, `${name} still ran after ${CEILING_MS} ms:\n${ran.output}`).toBe(false);
    expect(ran.leftover, `${name} left processes behind`).toBe(false);
    if (ran.code === 0) {
      if (expected[name] !== undefined) expect(ran.output).toMatch(expected[name]);
      // What the model sees of a program shows paths relative to the workspace, not the host's (the host's log may).
      if (name === 'example:ptc') expect(ran.output.split('the sub-call log')[0]).not.toContain(root.replace(/\/$/, ''));
    } else {
      expect(ran.output, `${name} exited ${ran.code} without saying what to set or start`).toMatch(/ANTHROPIC_API_KEY|OPENAI_API_KEY|REDIS_URL|redis-server|\bstart\b|\bset\b/);
    }
  }, CEILING_MS + 30_000);
});

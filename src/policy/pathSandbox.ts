import { isAbsolute, relative, resolve, sep } from 'node:path';
import { GlobSet } from '../internal/glob.js';
import type { PrePolicy } from './types.js';

/**
 * Options of {@link pathSandbox}.
 *
 * @example
 * ```ts
 * const options: PathSandboxOptions = { root: '/work/project', keys: ['path', 'paths'], tools: ['*_file'] };
 * ```
 */
export interface PathSandboxOptions {
  /** The directory paths must stay inside. Resolved to an absolute path once. */
  readonly root: string;
  /**
   * Top-level argument names that hold a path (a string) or paths (an array of strings).
   * @default ['path', 'paths', 'file', 'filePath', 'file_path', 'dir', 'directory', 'cwd']
   */
  readonly keys?: readonly string[];
  /** Tools it applies to (globs). @default ['*'] */
  readonly tools?: readonly string[];
}

const DEFAULT_KEYS = ['path', 'paths', 'file', 'filePath', 'file_path', 'dir', 'directory', 'cwd'];

/**
 * Keeps path arguments inside `root`: a path that resolves outside it (`../../etc/passwd`,
 * `/etc/passwd`), or holds a NUL byte, denies the call; a path inside it is rewritten to its absolute,
 * normalised form (`src/../README.md` → `/work/project/README.md`), so the body never resolves a relative
 * path against some other working directory. The check is lexical: a symlink inside `root` that points
 * out is not followed (pair it with OS-level confinement if tools can create links). Calls it does not
 * deny pass on to the next policy.
 *
 * @throws {TypeError} when `root` is not a non-empty string, or `keys` / `tools` are malformed.
 *
 * @example
 * ```ts
 * createPipeline({ tools, pre: [pathSandbox({ root: process.cwd() })] });
 * // { path: 'notes/a.md' } → runs with { path: '/home/me/project/notes/a.md' }
 * // { path: '../secrets' } → denied: "path" (../secrets) is outside /home/me/project
 * ```
 */
export function pathSandbox(options: PathSandboxOptions): PrePolicy {
  const { root: rootOption, keys = DEFAULT_KEYS, tools = ['*'] } = options;
  if (typeof rootOption !== 'string' || rootOption === '') {
    throw new TypeError(`pathSandbox: root must be a non-empty path; received ${String(rootOption)}`);
  }
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string')) {
    throw new TypeError('pathSandbox: keys must be an array of argument names');
  }
  const root = resolve(rootOption);
  const applies = new GlobSet(tools);

  const confine = (value: string): string | undefined => {
    if (value.includes('\0')) return undefined;
    const absolute = resolve(root, value);
    const inside = relative(root, absolute);
    const escapes = inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside);
    return escapes ? undefined : absolute;
  };

  const policy: PrePolicy = (ctx) => {
    if (!applies.matches(ctx.call.name)) return undefined;
    // The input form: what the model sent (and earlier policies rewrote), which rewriteArgs takes.
    const args = ctx.input;
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
    let rewritten: Record<string, unknown> | undefined;
    for (const key of keys) {
      if (!Object.hasOwn(args, key)) continue;
      const value = (args as Record<string, unknown>)[key];
      if (value === undefined || value === null) continue;
      // Anything else that is not a path string is denied: Node's fs also takes URL-like objects.
      if (typeof value !== 'string' && !Array.isArray(value)) return { decision: 'deny', reason: `"${key}" must hold paths` };
      const values: readonly unknown[] = typeof value === 'string' ? [value] : value;
      const confined: unknown[] = [];
      for (const item of values) {
        if (typeof item !== 'string') return { decision: 'deny', reason: `"${key}" must hold paths` };
        const absolute = confine(item);
        if (absolute === undefined) return { decision: 'deny', reason: `"${key}" (${JSON.stringify(item)}) is outside ${root}` };
        confined.push(absolute);
      }
      if (confined.some((absolute, i) => absolute !== values[i])) {
        rewritten ??= { ...args };
        rewritten[key] = typeof value === 'string' ? confined[0] : confined;
      }
    }
    if (rewritten !== undefined) ctx.rewriteArgs(rewritten);
    // What the body receives is the schema's output: a default or a transform may put a path there
    // that the model never sent (e.g. `cwd: z.string().default('/etc')`). Check that too.
    const effective = ctx.args;
    if (typeof effective === 'object' && effective !== null) {
      for (const key of keys) {
        const value = (effective as Record<string, unknown>)[key];
        const values = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
        for (const item of values) {
          if (typeof item === 'string' && confine(item) === undefined) {
            return { decision: 'deny', reason: `"${key}" (${JSON.stringify(item)}) is outside ${root}` };
          }
        }
      }
    }
    return undefined;
  };
  return Object.defineProperty(policy, 'name', { value: `pathSandbox(${root})` });
}

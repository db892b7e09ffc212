import { isObject } from '../../util/validate.js';

/**
 * The argument names `pathSandbox` treats as holding paths unless told otherwise. A key matches, in any
 * case and anywhere in the arguments, when it equals one of these without `_`, `-` and `.`
 * (`filePath`, `FILE_PATH`), or when its last word does (`notebook_path`, `targetFile`, `old_dir`).
 * Extend it for your tools: `pathSandbox({ root, keys: [...DEFAULT_PATH_KEYS, 'target'] })`.
 *
 * @example
 * ```ts
 * DEFAULT_PATH_KEYS.includes('destination'); // true: the MCP filesystem server's move_file
 * ```
 */
export const DEFAULT_PATH_KEYS: readonly string[] = Object.freeze([
  'path', 'paths', 'filepath', 'filepaths', 'file', 'files', 'filename', 'filenames',
  'dir', 'dirs', 'directory', 'directories', 'folder', 'folders', 'cwd', 'workdir', 'root',
  'source', 'sources', 'src', 'destination', 'destinations', 'dest',
]);

/** Where in the arguments a value sits: keys and array indices from the top. */
export type ArgumentPath = readonly (string | number)[];

/** A path-like value found in the arguments. */
export interface FoundPath {
  readonly at: ArgumentPath;
  readonly value: string;
}

/** What the arguments hold under path keys: the paths, or the first value that is not one. */
export type PathScan = { readonly paths: readonly FoundPath[] } | { readonly notAPath: ArgumentPath };

/** Decides which argument names hold paths (see {@link DEFAULT_PATH_KEYS} for the rule). */
export class PathKeys {
  readonly #names: ReadonlySet<string>;

  constructor(names: readonly string[]) {
    this.#names = new Set(names.map(normalize));
  }

  matches(key: string): boolean {
    if (this.#names.has(normalize(key))) return true;
    const words = key.split(/[_\-.\s]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/);
    const last = words[words.length - 1];
    return last !== undefined && last !== '' && this.#names.has(normalize(last));
  }

  /**
   * Every string under a path key, at any depth: a path key's string, the strings of its arrays, and
   * whatever path keys its objects hold (`files: [{ path }]`). Under a path key, anything else that is
   * not nothing (`null`) — a number (a file descriptor to `fs`), a boolean, an object that looks like a
   * URL (`fs` takes one as a file URL) — is not a path, and reported.
   */
  scan(args: unknown): PathScan {
    const paths: FoundPath[] = [];
    const visit = (value: unknown, at: (string | number)[], underPathKey: boolean): ArgumentPath | undefined => {
      if (typeof value === 'string') {
        if (underPathKey) paths.push({ at, value });
        return undefined;
      }
      if (!isObject(value)) return underPathKey && value !== null && value !== undefined ? at : undefined;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const bad = visit(value[i], [...at, i], underPathKey);
          if (bad !== undefined) return bad;
        }
        return undefined;
      }
      if (underPathKey && ('href' in value || 'protocol' in value)) return at;
      for (const key of Object.keys(value)) {
        const bad = visit(value[key], [...at, key], this.matches(key));
        if (bad !== undefined) return bad;
      }
      return undefined;
    };
    const notAPath = visit(args, [], false);
    return notAPath === undefined ? { paths } : { notAPath };
  }
}

/** A copy of `args` (frozen parts copied, never changed) with `value` at `at`, creating what is missing. */
export function setAt(args: unknown, at: ArgumentPath, value: unknown): unknown {
  if (at.length === 0) return value;
  const [key, ...rest] = at as [string | number, ...(string | number)[]];
  if (Array.isArray(args)) {
    const copy = [...args];
    copy[key as number] = setAt(args[key as number], rest, value);
    return copy;
  }
  const source = isObject(args) ? args : {};
  const copy: Record<string, unknown> = { ...source };
  Object.defineProperty(copy, key, { value: setAt(source[key], rest, value), enumerable: true, writable: true, configurable: true });
  return copy;
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/[_\-.\s]/g, '');
}

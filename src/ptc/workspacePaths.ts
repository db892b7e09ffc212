import { hostPaths } from '../util/host.js';

/**
 * Rewrites the host's absolute paths under a workspace directory to paths relative to it, in what a
 * program and the model see (`runCodeTool({ workspace })`): `/home/me/project/src/a.ts` becomes
 * `src/a.ts`, the directory itself `.`. Strings anywhere in a value are rewritten (a listing, an
 * error message, a stack trace); anything else is kept as it is. A path that only starts with the
 * same characters (`/home/me/project2`) is left alone.
 */
export type ShowPaths = <T>(value: T) => T;

/** Shows values as they are: no workspace. */
const asIs: ShowPaths = (value) => value;

/**
 * The rewrite for `workspace` (resolved; its real location too, when a symbolic link leads to it), or
 * the identity for none. Where the runtime has no file system of its own (a page, a Worker) the path
 * is taken as it is written.
 */
export function workspacePaths(workspace: string | undefined): ShowPaths {
  if (workspace === undefined) return asIs;
  const host = hostPaths();
  const sep = host?.sep ?? (workspace.includes('\\') && !workspace.includes('/') ? '\\' : '/');
  const roots = new Set([trimSeparator(host === undefined ? workspace : host.resolve(workspace), sep)]);
  try {
    if (host !== undefined) roots.add(trimSeparator(host.realpath(workspace), sep));
  } catch {
    // Not there (yet): its lexical form is what the tools were given.
  }
  // The longest first, so a root inside another is taken whole. A root followed by a separator loses
  // both; alone (not followed by more of a name: `/srv/ws2`, `/srv/ws.old`; a full stop ending a
  // sentence is not one) it is `.`.
  const alternatives = [...roots].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|');
  const pattern = new RegExp(`(?:${alternatives})(?:${escapeRegExp(sep)}+|(?![\\w-]|\\.[\\w.-]))`, 'g');
  const rewrite = (text: string): string => text.replace(pattern, (match) => (match.endsWith(sep) ? '' : '.'));
  const show = (value: unknown, seen: WeakMap<object, unknown>): unknown => {
    if (typeof value === 'string') return rewrite(value);
    if (typeof value !== 'object' || value === null) return value;
    if (seen.has(value)) return seen.get(value);
    if (Array.isArray(value)) {
      const copy: unknown[] = [];
      seen.set(value, copy);
      for (const item of value) copy.push(show(item, seen));
      return copy;
    }
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value; // a Date, a Map: as it is
    const copy: Record<string, unknown> = {};
    seen.set(value, copy);
    for (const [key, item] of Object.entries(value)) copy[rewrite(key)] = show(item, seen);
    return copy;
  };
  return <T>(value: T): T => show(value, new WeakMap()) as T;
}

function trimSeparator(path: string, sep: string): string {
  return path.length > 1 && path.endsWith(sep) ? path.slice(0, -1) : path;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/** Symbolic links followed at most, as the kernel's own limit (ELOOP). */
const MAX_LINKS = 40;

/**
 * Where an absolute path really leads: its longest existing prefix with every symbolic link resolved
 * (`realpath`), and the rest appended. A dangling link on the way is followed to where it points, since
 * writing through it creates its target. Reads the file system; the answer is true now, not later.
 *
 * @throws the file system's error for anything but a missing part: a loop (`ELOOP`), no permission to
 *   look (`EACCES`) — a path that cannot be resolved cannot be shown to stay anywhere.
 *
 * @example
 * ```ts
 * // /work/link -> /etc
 * await realLocation('/work/link/passwd'); // '/etc/passwd'
 * await realLocation('/work/new/file.txt'); // '/work/new/file.txt' (nothing there yet)
 * ```
 */
export async function realLocation(path: string, links = 0): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  // Something on the way does not exist. If `path` itself is a link (dangling), follow it.
  let isLink = false;
  try {
    isLink = (await lstat(path)).isSymbolicLink();
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  if (isLink) {
    if (links >= MAX_LINKS) throw Object.assign(new Error(`too many symbolic links at ${path}`), { code: 'ELOOP' });
    return realLocation(resolve(dirname(path), await readlink(path)), links + 1);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await realLocation(parent, links), basename(path));
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

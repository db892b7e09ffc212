import { isAbsolute, relative, resolve, sep } from 'node:path';
import { describeError } from '../util/describe.js';
import { ConfigError } from '../util/errors.js';
import { formatPath } from '../util/formatIssues.js';
import { GlobSet } from '../util/glob.js';
import { realLocation } from './realLocation.js';
import type { PreContext, PreDecision, PrePolicy, StartCheck, StartVerdict } from '../types/policy.js';
import { DEFAULT_PATH_KEYS, PathKeys, setAt, type FoundPath, type PathScan } from '../tool/policy/pathArguments.js';

/**
 * Options of {@link pathSandbox}.
 *
 * @example
 * ```ts
 * const options: PathSandboxOptions = { root: '/work/project', keys: [...DEFAULT_PATH_KEYS, 'target'], tools: ['*_file'] };
 * ```
 */
export interface PathSandboxOptions {
  /** The directory paths must stay inside. Resolved to an absolute path once. */
  readonly root: string;
  /**
   * Argument names that hold paths, matched in any case and at any depth (see {@link DEFAULT_PATH_KEYS}
   * for the rule). Replaces the defaults: spread them in to extend them.
   * @default DEFAULT_PATH_KEYS
   */
  readonly keys?: readonly string[];
  /** Tools it applies to (globs). @default ['*'] */
  readonly tools?: readonly string[];
}

/**
 * Keeps path arguments inside `root`, wherever they sit in the arguments.
 *
 * 1. Every string under a path key (see {@link DEFAULT_PATH_KEYS}: `path`, `files: [{ path }]`,
 *    `source`/`destination`, `notebook_path`, … in any case, in nested objects and arrays) must resolve
 *    inside `root`, lexically (`../../etc/passwd`, `/etc/passwd` and NUL bytes are denied) and for real:
 *    symbolic links are resolved (the longest existing prefix, `realpath`; a dangling link is followed
 *    to where it points) and a path whose real location leaves `root` is denied. A number, boolean or
 *    URL-like object under a path key is denied too (`fs` reads a file descriptor or a file URL).
 * 2. A path inside is handed to the body absolute and normalised (`src/../README.md` →
 *    `/work/project/README.md`; a trailing `/` kept), through `rewriteArgs`, so the body never resolves
 *    a relative path against some other working directory.
 * 3. What the body receives is the schema's output: a default or a transform may put a path there the
 *    model never sent (`dir: z.string().default('.')`). Those are checked too; a relative one is pinned
 *    to its absolute form by writing it into the arguments at the same place, and denied when that does
 *    not take (a transform that makes it relative again).
 * 4. The check is repeated immediately before the body starts (`ctx.beforeStart`): approvals can take
 *    minutes, and a file swapped for a symbolic link meanwhile is caught.
 *
 * 5. It answers synchronously when it can: for a tool it does not apply to, and for a call that holds
 *    no path (nor a value under a path key that is not one), in the arguments as sent and as the body
 *    receives them. A call that holds a path is answered later (a promise): resolving symbolic links
 *    (`realpath`) is I/O, and doing it synchronously would block the event loop. So a chain with
 *    `pathSandbox` stays synchronous, and follows a virtual-time scheduler, only for calls without
 *    paths; for the others it waits for the file system, in real time.
 *
 * What remains is the body's own open: between the last check and the moment the body opens the
 * file, another process could swap a path component for a link. Close that race where it matters by
 * opening without following links (`fs.open(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)`,
 * which guards the last component) or by confining the process itself (a container, a user without
 * access, Landlock, bubblewrap). Calls it does not deny pass on to the next policy.
 *
 * @throws {ConfigError} when `root` is not a non-empty string, `keys` is not an array of argument
 *   names, or `tools` is not an array of non-empty globs (`option` names the one: `root`, `keys[1]`, `tools[0]`).
 *
 * @example
 * ```ts
 * createPipeline({ tools, pre: [pathSandbox({ root: process.cwd() })] });
 * // { path: 'notes/a.md' }              → runs with { path: '/home/me/project/notes/a.md' }
 * // { files: [{ path: '../secrets' }] } → denied: "files[0].path" ("../secrets") is outside /home/me/project
 * // { path: 'link-to-etc/passwd' }      → denied: it leads outside /home/me/project through a symbolic link
 * ```
 */
export function pathSandbox(options: PathSandboxOptions): PrePolicy {
  if (typeof options !== 'object' || options === null) throw new ConfigError('pathSandbox', 'options', 'an object ({ root, keys?, tools? })', options);
  const { root: rootOption, keys = DEFAULT_PATH_KEYS, tools = ['*'] } = options;
  if (typeof rootOption !== 'string' || rootOption === '') throw new ConfigError('pathSandbox', 'root', 'a non-empty path', rootOption);
  if (!Array.isArray(keys)) throw new ConfigError('pathSandbox', 'keys', 'an array of argument names', keys);
  const notAName = keys.findIndex((key) => typeof key !== 'string');
  if (notAName !== -1) throw new ConfigError('pathSandbox', `keys[${notAName}]`, 'an argument name (a string)', keys[notAName]);
  const root = resolve(rootOption);
  const applies = new GlobSet(tools, { where: 'pathSandbox', option: 'tools' }, { ignoreCase: true }); // matching more tools only tightens
  const pathKeys = new PathKeys(keys);

  const deny = (reason: string): PreDecision & StartVerdict => ({ decision: 'deny', reason });
  const notAPath = (scan: PathScan): PreDecision | undefined =>
    'notAPath' in scan ? deny(`"${formatPath(scan.notAPath)}" must hold paths`) : undefined;

  /** The absolute form of one path inside the root, or why it is denied. */
  const confine = async ({ at, value }: FoundPath, realRoot: string): Promise<{ absolute: string } | { denied: PreDecision }> => {
    const where = `"${formatPath(at)}" (${JSON.stringify(value)})`;
    if (value.includes('\0')) return { denied: deny(`${where} holds a NUL byte`) };
    let absolute = resolve(root, value);
    if (!inside(root, absolute)) return { denied: deny(`${where} is outside ${root}`) };
    let real: string;
    try {
      real = await realLocation(absolute);
    } catch (error) {
      return { denied: deny(`${where} cannot be resolved (${describeError(error)})`) };
    }
    if (!inside(realRoot, real)) return { denied: deny(`${where} leads outside ${root} through a symbolic link`) };
    if (value.endsWith(sep) && !absolute.endsWith(sep)) absolute += sep;
    return { absolute };
  };

  /** Every path in `args` confined, or the first denial. */
  const confineAll = async (paths: readonly FoundPath[], realRoot: string) => {
    const absolutes: string[] = [];
    for (const found of paths) {
      const outcome = await confine(found, realRoot);
      if ('denied' in outcome) return outcome;
      absolutes.push(outcome.absolute);
    }
    return { absolutes };
  };

  const realRootNow = async (): Promise<string> => {
    try {
      return await realLocation(root);
    } catch {
      return root; // a root that cannot be resolved: only paths lexically inside it pass below
    }
  };

  // 4. Again when the body is about to start: minutes may have passed. Synchronous without paths.
  const stillInside: StartCheck = (args) => {
    const scan = pathKeys.scan(args);
    if ('notAPath' in scan) return notAPath(scan) as StartVerdict;
    if (scan.paths.length === 0) return undefined;
    return realRootNow().then((realRoot) => checkReceived(scan.paths, realRoot) as Promise<StartVerdict | undefined>);
  };

  const policy: PrePolicy = (ctx) => {
    if (!applies.matches(ctx.call.name)) return undefined;
    const sent = pathKeys.scan(ctx.input);
    if ('notAPath' in sent) return notAPath(sent);
    if (sent.paths.length > 0) return confineCall(ctx, sent.paths);
    const received = pathKeys.scan(ctx.args);
    if ('notAPath' in received) return notAPath(received);
    if (received.paths.length > 0) return confineCall(ctx, sent.paths);
    ctx.beforeStart(stillInside); // no path now; a later policy's rewrite may add one
    return undefined;
  };

  /** A call that holds paths: confined against the real root (I/O, so a promise). */
  const confineCall = async (ctx: PreContext, sentPaths: readonly FoundPath[]): Promise<PreDecision | undefined> => {
    const realRoot = await realRootNow();

    // 1–2. The input form — what the model sent, which rewriteArgs takes — made absolute.
    const confined = await confineAll(sentPaths, realRoot);
    if ('denied' in confined) return confined.denied;
    let input = ctx.input;
    sentPaths.forEach((found, i) => {
      if (confined.absolutes[i] !== found.value) input = setAt(input, found.at, confined.absolutes[i]);
    });
    if (input !== ctx.input) ctx.rewriteArgs(input);

    // 3. The output form — what the body receives — with the paths defaults and transforms added.
    let received = pathKeys.scan(ctx.args);
    if ('notAPath' in received) return notAPath(received);
    const relativePaths = received.paths.filter(({ value }) => !isAbsolute(value));
    if (relativePaths.length > 0) {
      const pinned = await confineAll(relativePaths, realRoot);
      if ('denied' in pinned) return pinned.denied;
      relativePaths.forEach((found, i) => (input = setAt(input, found.at, pinned.absolutes[i])));
      ctx.rewriteArgs(input);
      received = pathKeys.scan(ctx.args);
      if ('notAPath' in received) return notAPath(received);
    }
    const denial = await checkReceived(received.paths, realRoot);
    if (denial !== undefined) return denial;

    ctx.beforeStart(stillInside);
    return undefined;
  };

  /** What the body receives: every path absolute, and inside the root lexically and for real. */
  const checkReceived = async (paths: readonly FoundPath[], realRoot: string): Promise<PreDecision | undefined> => {
    for (const found of paths) {
      if (!isAbsolute(found.value)) return deny(`"${formatPath(found.at)}" (${JSON.stringify(found.value)}) is relative, and the tool's schema keeps it so`);
      const outcome = await confine(found, realRoot);
      if ('denied' in outcome) return outcome.denied;
    }
    return undefined;
  };

  return Object.defineProperty(policy, 'name', { value: `pathSandbox(${root})` });
}

/** Whether `target` is `base` or below it (both absolute). */
function inside(base: string, target: string): boolean {
  const rest = relative(base, target);
  return !(rest === '..' || rest.startsWith(`..${sep}`) || isAbsolute(rest));
}

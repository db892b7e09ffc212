import { toAnswer } from '../../stream/answer.js';
import { GlobSet } from '../../util/glob.js';
import { thenOrNow } from '../../util/later.js';
import type { PreDecision, PrePolicy } from '../../types/policy.js';

// Tightening rules match regardless of case, so `Delete_Repo` cannot slip past `delete_*`; the
// loosening rule (allowTools) matches exactly, so it admits only the names that were written.
const TIGHTENING = { ignoreCase: true } as const;

/** Gives a policy a readable name for traces and error messages. */
function named(name: string, policy: PrePolicy): PrePolicy {
  return Object.defineProperty(policy, 'name', { value: name });
}

/**
 * Denies calls to tools whose names match any of `patterns` (globs: `*` any run, `?` one character),
 * and passes every other call on. Denial is the strictest decision, so it short-circuits: the policies
 * after it do not run for a denied call. Matching ignores case: `mcp__github__delete_*` also denies
 * `mcp__github__Delete_Repo`, so a tool's spelling cannot sidestep the rule.
 *
 * @throws {ConfigError} when `patterns` is not an array, or one is empty or not a string (`option`
 *   `patterns[i]`).
 *
 * @example
 * ```ts
 * createPipeline({ tools, pre: [denyTools(['mcp__github__delete_*', 'shell'], 'not in this workspace')] });
 * ```
 */
export function denyTools(patterns: readonly string[], reason?: string): PrePolicy {
  const globs = new GlobSet(patterns, { where: 'denyTools', option: 'patterns' }, TIGHTENING);
  return named(`denyTools(${globs.patterns.join(', ')})`, (ctx) => {
    const match = globs.firstMatch(ctx.call.name);
    return match === undefined ? undefined : { decision: 'deny', reason: reason ?? `"${ctx.call.name}" matches ${match}` };
  });
}

/**
 * Asks for approval of calls to tools matching `patterns`. It lets the rest of the chain decide first
 * (`next()`) and only tightens what comes back: a later policy's `deny` stands, so asking can never
 * be used to get around a stricter policy such as a path sandbox. Matching ignores case, as
 * {@link denyTools}' does. A call it does not match passes on at once; for one it matches, it answers
 * as soon as the rest of the chain has: at once when the rest answered at once (the chain stays
 * synchronous), else when the rest's answer comes.
 *
 * @throws {ConfigError} when `patterns` is not an array, or one is empty or not a string (`option`
 *   `patterns[i]`).
 *
 * @example
 * ```ts
 * createPipeline({ tools, pre: [askTools(['write_*', 'shell'])], approve: askInTerminal });
 * ```
 */
export function askTools(patterns: readonly string[], reason?: string): PrePolicy {
  const globs = new GlobSet(patterns, { where: 'askTools', option: 'patterns' }, TIGHTENING);
  return named(`askTools(${globs.patterns.join(', ')})`, (ctx, next) => {
    const match = globs.firstMatch(ctx.call.name);
    if (match === undefined) return undefined; // passing on is delegating: the rest decides
    // A `next()` that has settled is read at once, without subscribing; a pending one is waited for.
    return thenOrNow(toAnswer(next()), (downstream): PreDecision | undefined =>
      downstream.decision === 'deny' ? undefined : { decision: 'ask', reason: reason ?? `"${ctx.call.name}" matches ${match}` },
    );
  });
}

/**
 * Allows calls to tools matching `patterns` at once, without consulting the policies after it; every
 * other call passes on. Use it to exempt safe tools from a stricter `defaultDecision`, and place it after
 * the policies that must see every call (deny lists, sandboxes): a short-circuit skips what follows.
 * Matching is exact, case included (unlike {@link denyTools}): `read_*` does not allow `READ_secrets`,
 * so a loosening rule admits only the names it spells.
 *
 * @throws {ConfigError} when `patterns` is not an array, or one is empty or not a string (`option`
 *   `patterns[i]`).
 *
 * @example
 * ```ts
 * createPipeline({
 *   tools,
 *   pre: [denyTools(['shell']), pathSandbox({ root }), allowTools(['read_*', 'list_*'])],
 *   defaultDecision: 'ask',
 *   approve,
 * });
 * ```
 */
export function allowTools(patterns: readonly string[], reason?: string): PrePolicy {
  const globs = new GlobSet(patterns, { where: 'allowTools', option: 'patterns' });
  return named(`allowTools(${globs.patterns.join(', ')})`, (ctx) => {
    const match = globs.firstMatch(ctx.call.name);
    return match === undefined ? undefined : { decision: 'allow', reason: reason ?? `"${ctx.call.name}" matches ${match}` };
  });
}

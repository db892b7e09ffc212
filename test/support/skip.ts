/**
 * Why a group is skipped, said where it is declared: the skip reporter (`skipReporter.ts`) ends the run
 * with the titles of what was skipped, so a title that names its reason is the whole report.
 *
 * @example
 * ```ts
 * const missing = redisMissing();
 * describe.skipIf(missing !== undefined)(skippedBecause('the fleet', missing), () => { … });
 * ```
 */
export function skippedBecause(title: string, missing: string | undefined): string {
  return missing === undefined ? title : `${title} (skipped: ${missing})`;
}

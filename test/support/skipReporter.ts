import type { Reporter, TestCase, TestCollection, TestModule, TestSuite, Vitest } from 'vitest/node';

/**
 * A reporter that ends the run with what it skipped and why: each skipped group (the outermost
 * skipped describe, or a skipped test in a group that ran) by file, with its title — which says why
 * (`skippedBecause` in `skip.ts`), or the note of a `ctx.skip(note)`. A skip whose title gives no
 * reason is listed as such, so one cannot go unnoticed. Listed after the default reporter's summary:
 * `reporters: ['default', './test/support/skipReporter.ts']`.
 */
export default class SkipReporter implements Reporter {
  #vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.#vitest = vitest;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const log = (line: string) => (this.#vitest === undefined ? console.log(line) : this.#vitest.logger.log(line));
    const filtered = this.#vitest?.config.testNamePattern !== undefined;
    const groups = modules.flatMap((module) => skippedIn(module.children).map((group) => ({ file: module.relativeModuleId, ...group })));
    if (groups.length === 0) {
      log(' Skipped: nothing.');
      return;
    }
    const tests = groups.reduce((sum, group) => sum + group.tests, 0);
    if (filtered) {
      log(` Skipped: ${tests} test(s) that the name filter (-t) left out.`);
      return;
    }
    log(` Skipped: ${groups.length} group(s), ${tests} test(s):`);
    for (const group of groups) log(`   ${group.file} › ${group.title}${group.tests > 1 ? ` [${group.tests} tests]` : ''}${group.why}`);
  }
}

interface SkippedGroup {
  readonly title: string;
  readonly tests: number;
  /** Said after the title when the title names no reason. */
  readonly why: string;
}

/** A title that says why it was skipped: `skippedBecause`'s `(skipped: …)`, or a reason that says what to install. */
const SAYS_WHY = /skipped|install/i;

/** The outermost skipped groups and tests of `collection`. */
function skippedIn(collection: TestCollection): SkippedGroup[] {
  const found: SkippedGroup[] = [];
  for (const child of collection) {
    if (child.type === 'suite') {
      if (isSkipped(child)) found.push(group(child.fullName, [...child.children.allTests()].length, undefined, child.options.mode));
      else found.push(...skippedIn(child.children));
    } else if (child.result().state === 'skipped' && !(child.options.mode === 'run' && noteOf(child) === undefined && setUpFailed(child))) {
      found.push(group(child.fullName, 1, noteOf(child), child.options.mode));
    }
  }
  return found;
}

/** A test left out because a set-up hook of its file or group failed: a failure, reported as one, not a skip. */
function setUpFailed(test: TestCase): boolean {
  for (let parent: TestSuite | TestModule = test.parent; ; parent = parent.parent) {
    if (parent.errors().length > 0) return true;
    if (parent.type === 'module') return false;
  }
}

function isSkipped(suite: TestSuite): boolean {
  const tests = [...suite.children.allTests()];
  return tests.length > 0 && tests.every((test) => test.result().state === 'skipped');
}

function group(title: string, tests: number, note: string | undefined, mode: string): SkippedGroup {
  const why = note !== undefined ? ` — ${note}` : mode === 'todo' ? ' — todo' : SAYS_WHY.test(title) ? '' : ' — (no reason given: name it in the title, see test/support/skip.ts)';
  return { title, tests, why };
}

function noteOf(test: TestCase): string | undefined {
  const result = test.result();
  return result.state === 'skipped' ? result.note : undefined;
}

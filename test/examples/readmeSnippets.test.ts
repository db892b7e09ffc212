import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// A README code block that names an example file on its first line (`// examples/agents/x.ts`) is an
// excerpt of that file: its lines appear there, in the same order (indentation aside). The files are
// type-checked (tsconfig includes examples/) and run by the tests beside this one, so the README shows
// code that compiles and works.

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const blocks = [...readme.matchAll(/```ts\n\/\/ (examples\/[\w/.-]+\.ts)\n([\s\S]*?)```/g)].map((m) => ({ file: m[1]!, body: m[2]! }));

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

describe('README snippets taken from examples/', () => {
  it('there are some', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
  });

  for (const { file, body } of blocks) {
    it(`${file}: every line of the snippet is in the file, in order`, () => {
      const source = lines(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));
      let at = 0;
      for (const line of lines(body)) {
        const found = source.indexOf(line, at);
        expect(found, `${file} has no line "${line}" after line ${at}`).toBeGreaterThanOrEqual(0);
        at = found + 1;
      }
    });
  }
});

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { skippedBecause } from './support/skip.js';

const shared = resolve(process.cwd(), '../shared/DESIGN.md');
const headings = (text: string) => text.split('\n').filter((line) => /^#{1,3} /.test(line)).map((line) => line.trim());

describe('docs/DESIGN.md', () => {
  it.skipIf(!existsSync(shared))(skippedBecause(`keeps every section of the shared design (${shared})`, existsSync(shared) ? undefined : `no ${shared} beside the repository`), () => {
    const ours = headings(readFileSync(resolve(process.cwd(), 'docs/DESIGN.md'), 'utf8'));
    expect(ours).toEqual(expect.arrayContaining(headings(readFileSync(shared, 'utf8'))));
  });

  it('is what the README links to, inside the repository', () => {
    const readme = readFileSync(resolve(process.cwd(), 'README.md'), 'utf8');
    expect(readme).toContain('](docs/DESIGN.md)');
    expect(readme).not.toMatch(/\]\(\.\.\/shared\//); // no link out of the repository
  });
});

describe('docs/ARCHITECTURE.md', () => {
  it('names every room the architecture check knows, and the README links to it', () => {
    const architecture = readFileSync(resolve(process.cwd(), 'docs/ARCHITECTURE.md'), 'utf8');
    const check = readFileSync(resolve(process.cwd(), 'scripts/archCheck.mjs'), 'utf8');
    const table = check.slice(check.indexOf('const ROOMS = ['), check.indexOf('];', check.indexOf('const ROOMS = [')));
    const folders = [...table.matchAll(/\['([a-z]+)\/', '[a-z]+'\]/g)].map((match) => match[1]!);
    expect(folders.length).toBeGreaterThanOrEqual(12);
    for (const folder of folders) expect(architecture).toContain(`\`src/${folder}/\``);
    expect(readFileSync(resolve(process.cwd(), 'README.md'), 'utf8')).toContain('](docs/ARCHITECTURE.md)');
  });
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
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

/**
 * The README and docs/ are read in the published package, where only package.json's `files` (and the
 * README, the license and package.json) exist. So a relative link may lead only there; a file of the
 * repository outside them (examples/, test/, bench/, src/ …) is linked absolutely, on the repository
 * package.json names. Every anchor exists in the page it points into.
 */
describe('the links of the README and docs/', () => {
  const root = process.cwd();
  const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { files: string[]; repository?: { url?: string } };
  const repository = (manifest.repository?.url ?? '').replace(/^git\+/, '').replace(/\.git$/, '');
  const pages = ['README.md', ...readdirSync(resolve(root, 'docs')).filter((file) => file.endsWith('.md')).map((file) => `docs/${file}`)];
  const shipped = (file: string) =>
    ['README.md', 'LICENSE', 'package.json'].includes(file) || manifest.files.some((entry) => file === entry || file.startsWith(`${entry}/`));

  /** The page's text without its code (fenced blocks, inline spans that hold no link). */
  const prose = (text: string) => text.replace(/^\s*```[^\n]*\n[\s\S]*?^\s*```\s*$/gm, '');
  const links = (page: string) =>
    [...prose(readFileSync(resolve(root, page), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);

  /** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
  const anchors = (page: string) => {
    const seen = new Map<string, number>();
    return prose(readFileSync(resolve(root, page), 'utf8'))
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => {
        const slug = line.replace(/^#+ /, '').trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
        const count = seen.get(slug) ?? 0;
        seen.set(slug, count + 1);
        return count === 0 ? slug : `${slug}-${count}`;
      });
  };

  it('names the repository in package.json', () => {
    expect(repository).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
  });

  it('keeps the README within 400 lines: the rest is in docs/', () => {
    expect(readFileSync(resolve(root, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(400);
  });

  it('links every page of docs/ from the README', () => {
    const readme = links('README.md');
    for (const page of pages.filter((page) => page !== 'README.md')) expect(readme, page).toContain(page);
  });

  // The guides name repository files a reader of the package does not have: each such name is a link.
  // (DESIGN.md and ARCHITECTURE.md describe the source tree itself, folder by folder.)
  it.each(pages.filter((page) => !/(DESIGN|ARCHITECTURE)\.md$/.test(page)))('%s: names a file of the repository only as a link to it', (page) => {
    const text = prose(readFileSync(resolve(root, page), 'utf8'));
    const bare = [...text.matchAll(/(\[?)`((?:examples|test|bench|scripts|src)\/[\w./-]*)`(\]\()?/g)]
      .filter((match) => (match[1] === '' || match[3] === undefined) && existsSync(resolve(root, match[2]!)))
      .map((match) => match[2]!);
    expect(bare).toEqual([]);
  });

  it.each(pages)('%s: relative links lead to files of the package, absolute ones to files of the repository, anchors to headings', (page) => {
    const problems: string[] = [];
    for (const link of links(page)) {
      const [target = '', anchor] = link.split('#');
      if (/^[a-z]+:/.test(target)) {
        if (!target.startsWith(`${repository}/`)) continue; // another site: not checked here (no network)
        const file = /^\/(?:blob|tree)\/main\/(.+)$/.exec(target.slice(repository.length))?.[1];
        if (file === undefined) problems.push(`${link}: not a file of the repository (…/blob/main/<path>)`);
        else if (!existsSync(resolve(root, file))) problems.push(`${link}: the repository has no ${file}`);
        else if (anchor !== undefined && file.endsWith('.md') && !anchors(file).includes(anchor)) problems.push(`${link}: ${file} has no heading #${anchor}`);
        continue;
      }
      const file = target === '' ? page : relative(root, resolve(root, dirname(page), target)).split(sep).join('/');
      if (!shipped(file)) problems.push(`${link}: ${file} is not in the package (link it on ${repository})`);
      else if (!existsSync(resolve(root, file))) problems.push(`${link}: no such file`);
      else if (anchor !== undefined && !anchors(file).includes(anchor)) problems.push(`${link}: ${file} has no heading #${anchor}`);
    }
    expect(problems).toEqual([]);
  });
});

import type { ArgsIssue } from '../types/toolError.js';
import { cut } from './describe.js';

/** `['files', 2, 'path']` → `files[2].path`; the empty path → `(root)`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) text += text === '' ? key : `.${key}`;
    else text += `[${JSON.stringify(String(key))}]`;
  }
  return text === '' ? '(root)' : text;
}

/** How many issues a message lists, and how long each line may be: the model sent the keys and values. */
const LISTED_ISSUES = 20;
const MAX_LINE_CHARS = 300;

/** One line per issue, path first, so a model can see what to correct; bounded however many there are. */
export function formatIssues(issues: readonly ArgsIssue[]): string {
  const lines = issues.slice(0, LISTED_ISSUES).map((issue) => cut(`- ${formatPath(issue.path)}: ${issue.message}`, MAX_LINE_CHARS));
  if (issues.length > LISTED_ISSUES) lines.push(`- and ${issues.length - LISTED_ISSUES} more issues`);
  return lines.join('\n');
}

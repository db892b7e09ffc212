import type { ArgsIssue } from '../toolError.js';

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

/** One line per issue, path first, so a model can see what to correct. */
export function formatIssues(issues: readonly ArgsIssue[]): string {
  return issues.map((issue) => `- ${formatPath(issue.path)}: ${issue.message}`).join('\n');
}

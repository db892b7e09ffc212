// examples/testing/tools.ts
// A user's own tools, and the policy that guards them, as an app defines them: property- and
// marble-tested in tools.property.test.ts with toolstream/testing. What the tools do is the
// workspace's (the disk and a search service in the app, a fake in the tests).
import { askTools, defineTool, type PrePolicy, type ToolOutput } from 'toolstream';
import { z } from 'zod';

/** Where the tools' work happens. Each method answers with a value, a promise or an Observable. */
export interface Workspace {
  read(path: string, signal: AbortSignal): ToolOutput<string>;
  write(path: string, text: string, signal: AbortSignal): ToolOutput<void>;
  search(query: string, signal: AbortSignal): ToolOutput<readonly string[]>;
}

/** The tools over one workspace. Make them once and share them: `search`'s quota is theirs, in every pipeline. */
export function workspaceTools(workspace: Workspace) {
  const path = z.string().min(1);
  return [
    // Reads overlap one another.
    defineTool({
      name: 'read_file',
      description: 'Read a UTF-8 file of the workspace',
      input: z.object({ path }),
      mode: 'parallel',
      execute: ({ path }, { signal }) => workspace.read(path, signal),
    }),
    // A write runs alone (nothing overlaps it, later calls wait for it), once a human approved it.
    defineTool({
      name: 'write_file',
      description: 'Write a UTF-8 file of the workspace',
      input: z.object({ path, text: z.string() }),
      mode: 'exclusive',
      execute: ({ path, text }, { signal }) => workspace.write(path, text, signal),
    }),
    // The search service takes five queries a second.
    defineTool({
      name: 'search',
      description: 'Search the workspace',
      input: z.object({ query: z.string() }),
      mode: 'parallel',
      rateLimit: { max: 5, perMs: 1_000 },
      execute: ({ query }, { signal }) => workspace.search(query, signal),
    }),
  ] as const;
}

/** Writes need a human's yes (the pipeline's `approve`). */
export const policies: readonly PrePolicy[] = [askTools(['write_file'])];

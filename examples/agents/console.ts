// What the agent loops share besides the workspace: the prompt from the command line, the system
// instructions, and a line per call of each turn.
import type { ToolResult } from 'toolstream';

/** The prompt: the command line's arguments (but `--yes`), or the demo's task. */
export function prompt(): string {
  const words = process.argv.slice(2).filter((word) => word !== '--yes').join(' ').trim();
  return words !== '' ? words : 'Summarise the TODOs of the workspace in notes/summary.md.';
}

/** `--yes` on the command line: approve the workspace's writes without asking (else a terminal asks, and without one they are rejected). */
export const yes = (): boolean => process.argv.includes('--yes');

/** Tells the model where it works: the tools take paths relative to the workspace. */
export const instructions =
  'You work in a small project workspace through the tools list_dir, read_file, search and write_file. ' +
  'Paths are relative to the workspace root ("." is the root).';

/** Prints what the model said in a turn, and how each of its calls ended. */
export function report(step: number, turn: { readonly text: string; readonly results: readonly ToolResult[] }): void {
  if (turn.text !== '') console.log(`[${step}] ${turn.text}`);
  for (const r of turn.results) {
    const detail = r.status === 'ok' ? `${r.content.length} characters` : `${r.error.code}: ${r.content.split('\n')[0]}`;
    console.log(`    ${r.status === 'ok' ? '✓' : '✗'} ${r.name} ${JSON.stringify(r.args ?? null)} → ${r.status} (${detail})`);
  }
}

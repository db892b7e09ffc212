// Runs the cases in Node, Bun or Deno: `<runtime> run.mjs` beside the bundle (cases.js). The first line
// says which runtime ran them, and its version, as the runtime itself reports it.
import { runCases } from './cases.js';

const version = globalThis.Deno?.version.deno ?? globalThis.Bun?.version ?? globalThis.process?.versions.node;
console.log(JSON.stringify({ version }));
await runCases({ print: (line) => console.log(line) });

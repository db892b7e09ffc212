// The architecture check (`npm run arch`; `.ci/run` runs it before the tests). It reads every import of
// src/ with the project's own TypeScript parser (type-only imports count as much as value imports: a
// type import is still a dependency a reader must follow) and fails when
// - a file is in no room of ROOMS below (so every new file gets a room on purpose);
// - an import runs where ALLOWED does not let it: up (the engine into a layer or the composition root,
//   a leaf into the engine, ...) or sideways between layers other than the exceptions listed;
// - an engine file imports a layer, as issue 25's acceptance defines it: no file outside the layer
//   folders (durable/, bullmq/, observe/, otel/, adapters/, mcp/, ptc/) and the composition root
//   (createPipeline.ts, options.ts, index.ts, or a top-level pipeline/ folder) imports a layer. This
//   is checked from the folders themselves, whatever ROOMS says, so a wrong room cannot hide it;
// - files import each other in a cycle (reported as the cycle's set of files, a strongly connected
//   component of the import graph);
// - a file is over 400 lines.
//
// Strict by default: there is no baseline file, so nothing is tolerated. For a migration that must land
// in steps (issue 25 used one, from 44 known violations to none), a ratchet: violations listed in
// scripts/arch-baseline.json are tolerated, and the check also fails when a listed violation no longer
// occurs, so the step that fixes one deletes its entry and the baseline only shrinks. It prints exactly
// which entries to add or remove.
//
// Usage:
//   node scripts/archCheck.mjs [checkout]                    check (checkout: default, this repository)
//   node scripts/archCheck.mjs [checkout] --update-baseline  rewrite scripts/arch-baseline.json to list
//       exactly today's violations, and print what it added and removed. For a step that fixed some:
//       it should only remove. Files in no room are never written there: they always fail.
// Exit code 0 when the check passes (or the baseline was rewritten), 1 when it fails, 2 on bad usage.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const MAX_LINES = 400;
const BASELINE = 'scripts/arch-baseline.json';

// Path inside src/ (a file, or a folder ending in '/') → room; the longest match wins. The layout of
// issue 25: types ← util ← stream ← tool ← engine ← layers ← pipeline. A file anywhere else is in no
// room and fails the check, so a new folder gets a room on purpose.
const ROOMS = [
  ['types/', 'types'], ['util/', 'util'], ['stream/', 'stream'], ['tool/', 'tool'], ['engine/', 'engine'],
  ['durable/', 'durable'], ['bullmq/', 'bullmq'], ['observe/', 'observe'], ['adapters/', 'adapters'],
  ['mcp/', 'mcp'], ['ptc/', 'ptc'], ['otel/', 'otel'], ['pipeline/', 'pipeline'], ['index.ts', 'pipeline'], ['turns/', 'turns'],
  ['testing/', 'testing'], ['node/', 'node'],
];

// The rooms below the layers, low to high; a room may import the rooms below it.
const BELOW = ['types', 'util', 'stream', 'tool', 'engine'];
const LAYERS = ['durable', 'bullmq', 'observe', 'otel', 'adapters', 'mcp', 'ptc'];
// Room → the rooms its files may import (besides their own). Sideways between layers only as listed.
const ALLOWED = {
  types: [],
  util: ['types'],
  stream: ['types', 'util'],
  tool: ['types', 'util', 'stream'],
  engine: ['types', 'util', 'stream', 'tool'],
  durable: BELOW,
  bullmq: [...BELOW, 'durable'], // the fleet's journal store and job identity (canonical args)
  observe: BELOW,
  // toolstream/otel: spans by the GenAI conventions, through a layer observer's call hooks; it imports
  // only @opentelemetry/api and shapes from below (the fleet reads its trace carrier from a call slot).
  otel: BELOW,
  adapters: [...BELOW, 'durable'], // answerable(): a durable turn's errors the formatters turn into results
  mcp: BELOW,
  ptc: [...BELOW, 'durable'], // a program's sub-calls suspend with the journal's PendingApproval
  pipeline: [...BELOW, ...LAYERS, 'turns'],
  // Operators over a pipeline given as a parameter (switchTurns, queueTurns): they know its public type only.
  turns: ['types', 'util', 'stream'],
  // toolstream/testing: arbitraries emit provider events, which users pipe through the adapters
  // themselves, so it needs no layer (resetRateLimits is re-exported from tool/).
  testing: ['types', 'util', 'stream', 'tool'],
  // toolstream/node: what needs Node's file system (pathSandbox), and the core as Node resolves it
  // (node/core.ts re-exports the composition root with pathSandbox, as 0.1's core did).
  node: ['types', 'util', 'stream', 'tool', 'pipeline'],
};

// Issue 25's definition of an engine file, from the folders alone (see the header).
const ROOT_FILES = ['createPipeline.ts', 'options.ts', 'index.ts'];
const topFolder = (file) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : undefined);
const isLayerFile = (file) => LAYERS.includes(topFolder(file));
const isEngineFile = (file) => !isLayerFile(file) && !ROOT_FILES.includes(file) && topFolder(file) !== 'pipeline';

function roomOf(file) {
  let best;
  for (const [prefix, name] of ROOMS) {
    const matches = prefix.endsWith('/') ? file.startsWith(prefix) : file === prefix;
    if (matches && (best === undefined || prefix.length > best[0].length)) best = [prefix, name];
  }
  return best?.[1];
}

// ── Reading src/ ──────────────────────────────────────────────────────────────────────────────────

// The project's own TypeScript, found from this script (a checkout under test needs no node_modules).
const ts = createRequire(import.meta.url)('typescript');

function sourceFiles(src) {
  const files = [];
  (function walk(dir) {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(c|m)?tsx?$/.test(entry.name) && !/\.d\.(c|m)?ts$/.test(entry.name)) files.push(full);
    }
  })(src);
  return files.map((full) => path.relative(src, full).split(path.sep).join('/')).sort();
}

function resolveSpecifier(src, from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(src, path.dirname(from), specifier).replace(/\.(c|m)?js$/, '');
  for (const candidate of [base + '.ts', base + '.tsx', base + '.mts', base + '.cts', path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate)) return path.relative(src, candidate).split(path.sep).join('/');
  }
  return undefined;
}

/** Every relative import of one file: import/export declarations, `import x = require()`, `import()` and `import('…').T`. */
function importsOf(sourceFile) {
  const found = [];
  const add = (literal, typeOnly) => {
    if (literal && ts.isStringLiteralLike(literal)) {
      found.push({ specifier: literal.text, typeOnly, line: sourceFile.getLineAndCharacterOfPosition(literal.getStart()).line + 1 });
    }
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      add(node.moduleSpecifier, !!clause && (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly))));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier, node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

function readGraph(src) {
  const files = sourceFiles(src);
  const graph = new Map(); // file → { lines, imports: [{ to, typeOnly, line }] }
  for (const file of files) {
    const text = fs.readFileSync(path.join(src, file), 'utf8');
    const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const imports = [];
    for (const found of importsOf(sourceFile)) {
      const to = resolveSpecifier(src, file, found.specifier);
      if (to !== undefined) imports.push({ to, typeOnly: found.typeOnly, line: found.line });
    }
    graph.set(file, { lines, imports });
  }
  return graph;
}

// ── The rules ─────────────────────────────────────────────────────────────────────────────────────

/** Strongly connected components with more than one file (or a file importing itself): Tarjan's. */
function cycles(graph) {
  let next = 0;
  const index = new Map(), low = new Map(), onStack = new Set(), stack = [], found = [];
  const connect = (file) => {
    index.set(file, next); low.set(file, next); next++; stack.push(file); onStack.add(file);
    for (const { to } of graph.get(file).imports) {
      if (!index.has(to)) { connect(to); low.set(file, Math.min(low.get(file), low.get(to))); }
      else if (onStack.has(to)) low.set(file, Math.min(low.get(file), index.get(to)));
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do { member = stack.pop(); onStack.delete(member); component.push(member); } while (member !== file);
    if (component.length > 1 || graph.get(file).imports.some(({ to }) => to === file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return found;
}

/** One shortest way round a cycle from its first file, as `a.ts:3 → b.ts:7 → a.ts`, to show where to cut. */
function cyclePath(graph, members) {
  const inside = new Set(members), start = members[0];
  const cameFrom = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const { to, line } of graph.get(file).imports) {
      if (!inside.has(to)) continue;
      if (to === start) {
        const steps = [`${file}:${line}`];
        for (let at = cameFrom.get(file); at !== undefined; at = cameFrom.get(at[0])) steps.unshift(`${at[0]}:${at[1]}`);
        return [...steps, start].join(' → ');
      }
      if (!cameFrom.has(to)) { cameFrom.set(to, [file, line]); queue.push(to); }
    }
  }
  return members.join(', ');
}

function violations(graph) {
  const noRoom = [...graph.keys()].filter((file) => roomOf(file) === undefined);
  const imports = new Map(); // 'from -> to' → { typeOnly, lines, why }
  for (const [from, { imports: list }] of graph) {
    const fromRoom = roomOf(from);
    for (const { to, typeOnly, line } of list) {
      const toRoom = roomOf(to);
      const why = [];
      if (isEngineFile(from) && isLayerFile(to)) why.push('engine file → layer');
      if (fromRoom && toRoom && fromRoom !== toRoom && !ALLOWED[fromRoom].includes(toRoom)) {
        why.push(`${fromRoom} → ${toRoom}; ${fromRoom} may import ${ALLOWED[fromRoom].join(', ') || 'nothing else in src/'}`);
      }
      if (why.length === 0) continue;
      const key = `${from} -> ${to}`;
      const known = imports.get(key);
      if (known) { known.lines.push(line); known.typeOnly &&= typeOnly; } else imports.set(key, { typeOnly, lines: [line], why });
    }
  }
  const long = [...graph].filter(([, { lines }]) => lines > MAX_LINES).map(([file]) => file);
  return { noRoom, cycles: cycles(graph), imports, long };
}

// ── The ratchet ───────────────────────────────────────────────────────────────────────────────────

const KINDS = ['cycles', 'imports', 'long'];
const entryKey = (kind, entry) => (kind === 'cycles' ? JSON.stringify(entry) : entry);

function currentEntries(found) {
  return {
    cycles: [...found.cycles].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    imports: [...found.imports.keys()].sort(),
    long: [...found.long].sort(),
  };
}

function readBaseline(file) {
  if (!fs.existsSync(file)) return undefined;
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const kind of KINDS) {
    if (!Array.isArray(parsed?.[kind])) throw new Error(`"${kind}" must be an array`);
  }
  return parsed;
}

/** One entry a line, so that steps deleting different entries merge without conflicts. */
function writeBaseline(file, entries) {
  const list = (kind) => entries[kind].map((entry) => `    ${JSON.stringify(entry)}`).join(',\n');
  const body = KINDS.map((kind) => `  "${kind}": [${entries[kind].length ? `\n${list(kind)}\n  ` : ''}]`).join(',\n');
  const note = 'Known violations of scripts/archCheck.mjs (issue 25). A step that fixes one deletes its entry; the check fails on a stale one.';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `{\n  "note": ${JSON.stringify(note)},\n${body}\n}\n`);
}

function difference(kind, from, without) {
  const keys = new Set(without.map((entry) => entryKey(kind, entry)));
  return from.filter((entry) => !keys.has(entryKey(kind, entry)));
}

// ── Main ──────────────────────────────────────────────────────────────────────────────────────────

function main(argv) {
  const update = argv.includes('--update-baseline');
  const rest = argv.filter((arg) => arg !== '--update-baseline');
  if (rest.length > 1 || rest.some((arg) => arg.startsWith('-'))) {
    console.error('usage: node scripts/archCheck.mjs [checkout] [--update-baseline]');
    return 2;
  }
  const checkout = path.resolve(rest[0] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  const src = path.join(checkout, 'src');
  const baselineFile = path.join(checkout, BASELINE);
  if (!fs.existsSync(src)) {
    console.error(`arch: no src/ in ${checkout}`);
    return 2;
  }
  const graph = readGraph(src);
  const found = violations(graph);
  const current = currentEntries(found);
  const typeOnly = [...found.imports.values()].filter((v) => v.typeOnly).length;
  const total = [...graph.values()].reduce((sum, { lines }) => sum + lines, 0);
  console.log(`src: ${graph.size} files, ${total} lines; cycles (type imports too): ${found.cycles.length}`
    + `${found.cycles.length ? ` (sizes ${found.cycles.map((c) => c.length).sort((a, b) => b - a).join(', ')})` : ''}; `
    + `imports not allowed: ${found.imports.size} (${typeOnly} type-only); files over ${MAX_LINES} lines: ${found.long.length}`);

  let baseline;
  try {
    baseline = readBaseline(baselineFile);
  } catch (error) {
    if (!update) {
      console.log(`arch: FAIL ${BASELINE} cannot be read: ${error.message}`);
      return 1;
    }
  }
  const known = baseline ?? { cycles: [], imports: [], long: [] };
  const added = Object.fromEntries(KINDS.map((kind) => [kind, difference(kind, current[kind], known[kind])]));
  const gone = Object.fromEntries(KINDS.map((kind) => [kind, difference(kind, known[kind], current[kind])]));
  const count = (entries) => KINDS.reduce((sum, kind) => sum + entries[kind].length, 0);
  const show = (kind, entry) => {
    if (kind === 'cycles') return `${JSON.stringify(entry)}${graph.has(entry[0]) ? `\n        ${cyclePath(graph, entry)}` : ''}`;
    if (kind === 'long') return `${JSON.stringify(entry)}${graph.has(entry) ? ` (${graph.get(entry).lines} lines)` : ''}`;
    const detail = found.imports.get(entry);
    return `${JSON.stringify(entry)}${detail ? `  (line ${detail.lines.join(', ')}${detail.typeOnly ? ', type-only' : ''}: ${detail.why.join('; ')})` : ''}`;
  };
  const print = (title, entries) => {
    if (count(entries) === 0) return;
    console.log(title);
    for (const kind of KINDS) for (const entry of entries[kind]) console.log(`  ${kind}: ${show(kind, entry)}`);
  };

  for (const file of found.noRoom) console.log(`no room: src/${file} — add it to ROOMS in scripts/archCheck.mjs`);
  if (update) {
    writeBaseline(baselineFile, current);
    print(`${BASELINE}: removed (fixed)`, gone);
    print(`${BASELINE}: ADDED (new violations; only on purpose)`, added);
    console.log(`${BASELINE}: ${current.cycles.length} cycles, ${current.imports.length} imports, ${current.long.length} long files`);
    return found.noRoom.length ? 1 : 0;
  }

  const where = baseline ? `not in ${BASELINE}` : `no ${BASELINE}: strict`;
  print(`new violations (${where}); fix them, or add them there if you must:`, added);
  print(`fixed, so remove from ${BASELINE} (or run node scripts/archCheck.mjs --update-baseline):`, gone);
  const failures = [];
  if (found.noRoom.length) failures.push(`${found.noRoom.length} files in no room`);
  if (count(added)) failures.push(`${count(added)} new violations`);
  if (count(gone)) failures.push(`${count(gone)} stale baseline entries`);
  const tolerated = count(current) - count(added);
  console.log(failures.length ? `arch: FAIL ${failures.join('; ')}`
    : `arch: ok${tolerated ? ` (${tolerated} known violations left in ${BASELINE})` : ''}`);
  return failures.length ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/*
 * The package as a user gets it. One `npm pack` (its `prepack` builds dist/) serves every test here,
 * so they share one file: the build writes dist/, which the other tests read.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  version: string;
  exports: Record<string, string | Record<string, Record<string, string>>>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};
const esbuild = createRequire(import.meta.url).resolve('esbuild/bin/esbuild');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/**
 * How long one command (npm pack builds dist/ with its types; npm install) may take, and a hook or test
 * running a few of them: minutes on a busy machine (npm pack passed 120 s at load 25). Ceilings only a
 * hang reaches. A command runs synchronously, so its own timeout, not the test's, is the one that fires.
 */
const COMMAND_MS = 300_000;
const SEVERAL_COMMANDS_MS = 600_000;

const run = (file: string, args: readonly string[], cwd: string): string =>
  execFileSync(file, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: COMMAND_MS });
const node = (args: readonly string[], cwd = root): string => run(process.execPath, args, cwd);

let work: string;
let tarball: string;
beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'toolstream-package-'));
  run('npm', ['pack', '--silent', '--pack-destination', work], root);
  tarball = path.join(work, `toolstream-${manifest.version}.tgz`);
}, SEVERAL_COMMANDS_MS);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the tarball', () => {
  it('holds the build, the docs the README links to and the license; no source maps, no stubs', () => {
    const files = run('tar', ['-tzf', tarball], work)
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.replace(/^package\//, ''));
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'docs/DESIGN.md', 'dist/quickjs-payload.cjs']));
    expect(files.filter((file) => !/^(dist|docs)\//.test(file)).sort()).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json']);
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(files.filter((file) => file.includes('worker'))).toEqual([]); // the worker is inside the payload
    // Every target of the exports map is shipped, and every declaration file declares something.
    type Target = string | { readonly [condition: string]: Target };
    const leaves = (target: Target): string[] => (typeof target === 'string' ? [target] : Object.values(target).flatMap(leaves));
    const targets = leaves(manifest.exports as Target);
    for (const target of targets) expect(files).toContain(target.replace(/^\.\//, ''));
    const extract = path.join(work, 'extracted');
    mkdirSync(extract);
    run('tar', ['-xzf', tarball, '-C', extract], work);
    for (const file of files.filter((name) => /\.d\.c?ts$/.test(name))) {
      expect(statSync(path.join(extract, 'package', file)).size, file).toBeGreaterThan(200);
    }
    const packed = JSON.parse(readFileSync(path.join(extract, 'package', 'package.json'), 'utf8')) as Record<string, unknown>;
    // One dependency: the core's SHA-256 and HMAC on every runtime (a range, so an app's copy is shared).
    expect(packed['dependencies']).toEqual({ '@noble/hashes': '^1.8.0' });

    // The README's relative links lead to files the package holds.
    const readme = readFileSync(path.join(extract, 'package', 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\((?!https?:|#)([^)#\s]+)/g)].map((match) => match[1]!);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(files, link).toContain(path.posix.normalize(link));
  });

  // docs/DESIGN.md is the repository's own design, in step with the code; test/docs.test.ts checks it
  // keeps every section of the shared design it started from.
});

describe('the built package, from the repository', () => {
  it('serves ESM and CJS with the same named exports, subpaths sharing one core', () => {
    const esm = node(['--input-type=module', '-e', "import * as t from 'toolstream'; console.log(Object.keys(t).sort().join())"]);
    const cjs = node(['-e', "console.log(Object.keys(require('toolstream')).sort().join())"]);
    expect(esm.trim()).toBe(cjs.trim());
    expect(esm.trim().split(',')).toEqual(expect.arrayContaining(['createPipeline', 'defineTool', 'executeTools', 'ConfigError', 'runCodeTool']));
    expect(esm.trim().split(',')).not.toContain('createQuickJSRuntime'); // it is toolstream/quickjs

    // Subpath exports, both module systems, sharing one core: a call the Anthropic adapter marks as
    // cut off (an IncompleteArguments from its chunk) is recognised by the main entry's intake.
    const subpaths = [['anthropic', 'fromAnthropicStream'], ['openai', 'fromOpenAIChatStream'], ['ai-sdk', 'fromAISDKStream'], ['mcp', 'mcpTools'], ['quickjs', 'createQuickJSRuntime'], ['sqlite', 'sqliteJournal'], ['postgres', 'postgresJournal'], ['bullmq', 'redisJournal'], ['testing', 'checkInvariants']];
    for (const [subpath, name] of subpaths) {
      expect(node(['--input-type=module', '-e', `import { ${name} } from 'toolstream/${subpath}'; console.log(typeof ${name})`]).trim()).toBe('function');
      expect(node(['-e', `console.log(typeof require('toolstream/${subpath}').${name})`]).trim()).toBe('function');
    }
    const events = [
      { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'x', stop_reason: null, stop_sequence: null, usage: {} } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't1', name: 'x', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 1 } },
      { type: 'message_stop' },
    ];
    const cutOff = (load: string) => `${load}
      const tool = t.defineTool({ name: 'x', description: 'x', input: zod.z.object({}), execute: () => 'ran' });
      const events = (async function* () { yield* ${JSON.stringify(events)}; })();
      t.createPipeline({ tools: [tool] }).run(a.fromAnthropicStream(events)).then((results) => console.log(results[0].error.code));`;
    const esmScript = cutOff("const [t, a, zod] = await Promise.all([import('toolstream'), import('toolstream/anthropic'), import('zod')]);");
    const cjsScript = cutOff("const t = require('toolstream'), a = require('toolstream/anthropic'), zod = require('zod');");
    expect(node(['--input-type=module', '-e', esmScript]).trim()).toBe('incomplete_args');
    expect(node(['--input-type=commonjs', '-e', cjsScript]).trim()).toBe('incomplete_args');

    // Both builds in one process (an ESM app, a dependency that requires the CJS build): brand checks
    // hold across them — a call cut off in the CJS adapter is recognised by the ESM core, a CJS
    // runCodeTool is bound by an ESM pipeline, and the ESM error classes recognise CJS errors.
    const mixed = cutOff(`import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const [t, zod] = await Promise.all([import('toolstream'), import('zod')]);
      const a = require('toolstream/anthropic');
      const cjs = require('toolstream');
      const add = t.defineTool({ name: 'add', description: 'Add', input: zod.z.object({ a: zod.z.number() }), execute: ({ a }) => a + 1 });
      const runtime = require('toolstream/quickjs').createQuickJSRuntime();
      const [program] = await t.createPipeline({ tools: [add, cjs.runCodeTool({ runtime })] })
        .run([{ id: '1', name: 'run_code', args: { program: 'return await tools.add({ a: 1 })' } }]);
      await runtime.close();
      let configError; try { cjs.createPipeline({ tools: 'none' }); } catch (e) { configError = e; }
      const restricted = new cjs.RestrictionSet([{ scope: 'host', deny: ['add'] }]);
      const [denied] = await t.createPipeline({ tools: [add], restrictions: restricted }).run([{ id: '1', name: 'add', args: { a: 1 } }]);
      console.log(program.content, configError instanceof t.ConfigError, new t.IncompleteArguments('x', '') instanceof cjs.IncompleteArguments, denied.error.code);`);
    expect(node(['--input-type=module', '-e', mixed]).trim().split('\n')).toEqual(['2 true true restricted', 'incomplete_args']);

    // A durable turn of the ESM build runs a CJS run_code: the tool's trait (a program that journals its
    // sub-calls) and the call's slot (that journal, read by the body through its ctx) are registered
    // symbols, so the program's sub-call suspends into the turn's journal and is answered on resume.
    const durable = `import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const [t, zod] = await Promise.all([import('toolstream'), import('zod')]);
      const cjs = require('toolstream');
      const add = t.defineTool({ name: 'add', description: 'Add', input: zod.z.object({ a: zod.z.number() }), execute: ({ a }) => a + 1 });
      const runtime = require('toolstream/quickjs').createQuickJSRuntime();
      const pipeline = t.createPipeline({ tools: [add, cjs.runCodeTool({ runtime })], journal: t.memoryJournal(), approvalSecret: 'a test secret that is long enough to sign with', pre: [t.askTools(['add'])], approve: t.suspendApprovals() });
      const [program] = await pipeline.run([{ id: 'p', name: 'run_code', args: { program: 'return await tools.add({ a: 1 })' } }], { turn: 't' });
      const [approval] = await pipeline.pendingApprovals('t');
      const [resumed] = approval === undefined ? [] : await pipeline.resume('t', { answers: [{ token: approval.token, answer: 'allowed-once' }] });
      await runtime.close();
      console.log(program.error?.code, approval?.callId, resumed?.value?.value);`;
    expect(node(['--input-type=module', '-e', durable]).trim()).toBe('approval_pending p#1 2');

    // The built worker (bundled sucrase and trace-mapping) strips types and maps an error to the
    // program's own line and column, in both module systems.
    const program = (load: string) => `${load}
      const add = t.defineTool({ name: 'add', description: 'Add', input: zod.z.object({ a: zod.z.number() }), execute: ({ a }) => a + 1 });
      const runtime = q.createQuickJSRuntime();
      const pipeline = t.createPipeline({ tools: [add, t.runCodeTool({ runtime })] });
      pipeline.run([
        { id: '1', name: 'run_code', args: { program: 'const n: number = await tools.add({ a: 2 }); return n * 2' } },
        { id: '2', name: 'run_code', args: { program: 'const n = 1;\\nconst s: any = undefined;\\nreturn s.length' } },
      ]).then(([ok, failed]) => { console.log(ok.content, /at line 3, column 9$/m.test(failed.content)); return runtime.close(); });`;
    const load = "const [t, q, zod] = await Promise.all([import('toolstream'), import('toolstream/quickjs'), import('zod')]);";
    expect(node(['--input-type=module', '-e', program(load)]).trim()).toBe('6 true');
    expect(node(['--input-type=commonjs', '-e', program("const t = require('toolstream'), q = require('toolstream/quickjs'), zod = require('zod');")]).trim()).toBe('6 true');
  }, SEVERAL_COMMANDS_MS);
});

describe('a fresh project that installs the tarball', () => {
  let app: string;
  beforeAll(() => {
    app = path.join(work, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), `${JSON.stringify({ name: 'app', version: '1.0.0', private: true }, null, 2)}\n`);
    // What the README's install line says, with the versions this repository tests against.
    const deps = ['rxjs', 'zod'].map((name) => `${name}@${manifest.devDependencies[name]}`);
    run('npm', ['install', tarball, ...deps, '--prefer-offline', '--no-audit', '--no-fund', '--silent'], app);
  }, SEVERAL_COMMANDS_MS);

  /** The packages every file the core entries load imports, following their relative imports (the chunks they share). */
  const coreImports = (): { readonly bare: ReadonlySet<string>; readonly files: number } => {
    const dist = path.join(app, 'node_modules', 'toolstream', 'dist');
    const bare = new Set<string>();
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const [, specifier] of readFileSync(path.join(dist, file), 'utf8').matchAll(/(?:from\s*|require\(|import\()\s*['"]([^'"]+)['"]/g)) {
        if (specifier!.startsWith('./')) visit(specifier!.slice(2));
        else bare.add(specifier!);
      }
    };
    visit('index.js');
    visit('index.cjs');
    return { bare, files: seen.size };
  };

  /**
   * Loading a subpath without its optional peers, as ESM and as CommonJS, in a child `node`: it fails at
   * once with a `MissingPeerError` whose message names the package, its range and the install command.
   */
  const expectFailsWithout = (subpath: string, missing: string, install: string) => {
    const message = `toolstream/${subpath} needs ${missing} (${manifest.peerDependencies[missing]}), an optional peer dependency of toolstream that is not installed. Install it with: ${install}`;
    for (const load of [`import('toolstream/${subpath}')`, `Promise.resolve().then(() => require('toolstream/${subpath}'))`]) {
      const script = `${load}.then(() => console.log('loaded'), async (error) => {
        const { MissingPeerError } = await import('toolstream');
        console.log(JSON.stringify([error.code, error instanceof MissingPeerError, error.packageName, error.install, error.message]));
      })`;
      expect(JSON.parse(node(['-e', script], app)), load).toEqual(['peer_missing', true, missing, install, message]);
    }
  };
  const installOf = (...peers: string[]) => `npm install ${peers.map((name) => `${name}@${manifest.peerDependencies[name]}`).join(' ')}`;

  it('a subpath without its optional peer fails naming the package, its range and the install command', () => {
    expect(installOf('bullmq', 'ioredis')).toBe('npm install bullmq@^6.7.0 ioredis@^5.0.0'); // as the issue asks
    expectFailsWithout('sqlite', 'better-sqlite3', installOf('better-sqlite3'));
    expectFailsWithout('postgres', 'pg', installOf('pg'));
    expectFailsWithout('ai-sdk', 'ai', installOf('ai'));
    expectFailsWithout('mcp', '@modelcontextprotocol/sdk', installOf('@modelcontextprotocol/sdk'));
    // The subpaths with no peer to load up front (the SDK adapters read the SDKs' shapes; the QuickJS runtime is bundled).
    for (const subpath of ['anthropic', 'openai', 'quickjs']) {
      expect(node(['--input-type=module', '-e', `await import('toolstream/${subpath}'); console.log('loaded')`], app).trim(), subpath).toBe('loaded');
      expect(node(['-e', `require('toolstream/${subpath}'); console.log('loaded')`], app).trim(), subpath).toBe('loaded');
    }
  });

  it('the core never imports bullmq or ioredis: only toolstream/bullmq does, and without them it fails naming the install command', () => {
    const { bare, files } = coreImports();
    expect(files).toBeGreaterThan(2); // it found the chunks
    expect([...bare].filter((name) => /bullmq|ioredis/.test(name))).toEqual([]);
    const dist = path.join(app, 'node_modules', 'toolstream', 'dist');
    expect(readFileSync(path.join(dist, 'bullmq.js'), 'utf8')).toMatch(/import\(['"]ioredis['"]\)/); // the scan does see such an import
    expectFailsWithout('bullmq', 'ioredis', installOf('bullmq', 'ioredis'));
  });

  it('the core never imports fast-check: only toolstream/testing does, and without fast-check it fails naming it', () => {
    expect([...coreImports().bare].filter((name) => /fast-check/.test(name))).toEqual([]);
    const dist = path.join(app, 'node_modules', 'toolstream', 'dist');
    expect(readFileSync(path.join(dist, 'testing.js'), 'utf8')).toMatch(/import\(['"]fast-check['"]\)/); // the scan does see such an import
    expect(readFileSync(path.join(dist, 'testing.cjs'), 'utf8')).toMatch(/require\(['"]fast-check['"]\)/);
    expectFailsWithout('testing', 'fast-check', installOf('fast-check'));
  });

  it('the core never imports @opentelemetry/api: only toolstream/otel does, and without it it fails naming it', () => {
    expect([...coreImports().bare].filter((name) => /@opentelemetry/.test(name))).toEqual([]);
    const dist = path.join(app, 'node_modules', 'toolstream', 'dist');
    expect(readFileSync(path.join(dist, 'otel.js'), 'utf8')).toMatch(/import\(['"]@opentelemetry\/api['"]\)/); // the scan does see such an import
    expect(readFileSync(path.join(dist, 'otel.cjs'), 'utf8')).toMatch(/require\(['"]@opentelemetry\/api['"]\)/);
    expectFailsWithout('otel', '@opentelemetry/api', installOf('@opentelemetry/api'));
  });

  it('pulls nothing but toolstream, rxjs (with tslib), zod and @noble/hashes; the core never loads the QuickJS runtime', () => {
    const modules = path.join(app, 'node_modules');
    const installed = readdirSync(modules)
      .filter((name) => !name.startsWith('.'))
      .flatMap((name) => (name.startsWith('@') ? readdirSync(path.join(modules, name)).map((inner) => `${name}/${inner}`) : [name]));
    expect(installed.sort()).toEqual(['@noble/hashes', 'rxjs', 'toolstream', 'tslib', 'zod']); // noble: the core's SHA-256 and HMAC, on any runtime
    const loaded = node(['-e', "require('toolstream'); console.log(Object.keys(require.cache).filter((file) => /quickjs/i.test(file)).length)"], app);
    expect(loaded.trim()).toBe('0');
  });

  it('the core a browser or a Worker resolves imports nothing of Node; on Node, `toolstream` still exports pathSandbox, as 0.1 did', () => {
    expect([...coreImports().bare].filter((name) => name.startsWith('node:') || /^(crypto|fs|path|os|util|buffer|process)(\/|$)/.test(name))).toEqual([]);
    // A page's bundle of the package, resolved by its export conditions (browser, import, default): no Node built-in left to import.
    writeFileSync(path.join(app, 'page.ts'), "import { createPipeline, memoryJournal } from 'toolstream';\nexport const made = [createPipeline, memoryJournal].length;\n");
    run(esbuild, ['page.ts', '--bundle', '--platform=browser', '--format=esm', '--outfile=out/page.js', '--metafile=out/page.json', '--log-level=warning'], app);
    const inputs = Object.keys((JSON.parse(readFileSync(path.join(app, 'out', 'page.json'), 'utf8')) as { inputs: object }).inputs);
    expect(inputs.filter((input) => /toolstream\/dist\/index\.node|node:/.test(input))).toEqual([]);
    expect(inputs.some((input) => input.includes('toolstream/dist/index.js'))).toBe(true);
    // Node resolves the `node` condition: the core with pathSandbox; toolstream/node has it too (the same function).
    const same = "const a = await import('toolstream'); const b = await import('toolstream/node'); console.log(typeof a.pathSandbox, a.pathSandbox === b.pathSandbox, typeof a.createPipeline)";
    expect(node(['--input-type=module', '-e', same], app).trim()).toBe('function true function');
    expect(node(['-e', "const a = require('toolstream'); console.log(typeof a.pathSandbox, a.pathSandbox === require('toolstream/node').pathSandbox)"], app).trim()).toBe('function true');
  }, SEVERAL_COMMANDS_MS);

  it("runs the README's example, type-checked against the published types, as ESM and as CommonJS", () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const example = /## Quick start\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    expect(readFileSync(path.join(root, 'examples/quick-start.ts'), 'utf8')).toBe(example); // the file the suite type-checks
    const lines = example!.split('\n');
    const body = lines.findIndex((line) => !line.startsWith('import ') && !line.startsWith('//') && line.trim() !== '');
    writeFileSync(path.join(app, 'example.mts'), example!);
    // CommonJS has no top-level await: the same code, its body in an async function.
    writeFileSync(path.join(app, 'example.cts'), `${lines.slice(0, body).join('\n')}\nvoid (async () => {\n${lines.slice(body).join('\n')}\n})();\n`);
    const types = path.join(root, 'node_modules', '@types');
    const compilerOptions = { module: 'NodeNext', target: 'ES2022', strict: true, exactOptionalPropertyTypes: true, skipLibCheck: false, types: ['node'], typeRoots: [types] };
    writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['example.mts', 'example.cts'] }));
    run(process.execPath, [tsc, '-p', '.'], app); // throws with the compiler's errors
    const expected = `call_1 ok ${readFileSync(path.join(app, 'package.json'), 'utf8').length}\ncall_2 error invalid_args\n`;
    expect(node(['example.mjs'], app)).toBe(expected);
    expect(node(['example.cjs'], app)).toBe(expected);
  }, SEVERAL_COMMANDS_MS);

  it('runs an app that uses run_code from its esbuild bundle alone, without node_modules, as ESM and as CommonJS', () => {
    copyFileSync(path.join(root, 'examples/bundled-app.ts'), path.join(app, 'bundled-app.ts'));
    const bare = path.join(work, 'bare');
    mkdirSync(bare);
    for (const [format, file] of [['esm', 'app.mjs'], ['cjs', 'app.cjs']] as const) {
      run(esbuild, ['bundled-app.ts', '--bundle', '--platform=node', `--format=${format}`, `--outfile=out/${file}`, '--log-level=warning'], app);
      copyFileSync(path.join(app, 'out', file), path.join(bare, file));
    }
    expect(readdirSync(bare).sort()).toEqual(['app.cjs', 'app.mjs']);
    expect(existsSync(path.join(bare, '..', 'node_modules'))).toBe(false);
    expect(() => createRequire(path.join(bare, 'x.js')).resolve('toolstream')).toThrow();
    for (const file of ['app.mjs', 'app.cjs']) {
      expect(node([file], bare), file).toBe('ok {"sums":[11,12,13],"total":36}\n');
    }
  }, SEVERAL_COMMANDS_MS);

  // Last: it installs fast-check into the app, which the tests above must not see.
  it('with fast-check installed, toolstream/testing loads; scriptedStream without the SDK rejects naming the package', () => {
    run('npm', ['install', `fast-check@${manifest.devDependencies['fast-check']}`, '--prefer-offline', '--no-audit', '--no-fund', '--silent'], app);
    const parse = (load: string, format: string) => `${load}.then(async (t) => {
        const streams = t.anthropicStreams({ calls: t.toolCalls({ tools: { read: t.jsonFragments('{}') } }), mode: 'hostile' });
        try {
          for await (const event of t.scriptedStream('${format}', [])) console.log(event);
          console.log('parsed');
        } catch (error) {
          console.log(typeof streams.generate, error.code, error.packageName, error instanceof t.MissingSdkError);
        }
      })`;
    for (const load of ["import('toolstream/testing')", "Promise.resolve().then(() => require('toolstream/testing'))"]) {
      expect(node(['-e', parse(load, 'anthropic')], app).trim(), load).toBe('function sdk_missing @anthropic-ai/sdk true');
      expect(node(['-e', parse(load, 'chat')], app).trim(), load).toBe('function sdk_missing openai true');
    }
  }, SEVERAL_COMMANDS_MS);
});

/**
 * The core entry (`toolstream`) runs where there is no Node (issue 28): bundled for a browser by esbuild,
 * it imports no `node:` module and names neither `process` nor `Buffer` — but for the one lookup of the
 * runtime in `src/util/host.ts`, which finds none there and warns through `console.warn`. And it runs:
 * the bundle is evaluated in a `node:vm` context that has only web-standard globals (no `process`, no
 * `Buffer`, no `require`), where a pipeline with a durable turn, approval tokens and a throwing observer
 * does its work. The subpaths a web app uses with it (the provider adapters) are held to the same.
 */
import { createContext, runInContext } from 'node:vm';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** Global names a runtime without Node lacks; esbuild's `define` swaps each free use for a marker we look for. */
const FORBIDDEN = ['process', 'Buffer', 'global', 'require', '__dirname', '__filename', 'setImmediate'];
const MARK = '__TOOLSTREAM_NOT_ON_THE_WEB__';

async function bundle(entry: string, options: { readonly format: 'esm' | 'iife'; readonly external?: readonly string[]; readonly marked?: false }): Promise<{ readonly code: string; readonly metafile: Metafile }> {
  const define = Object.fromEntries([...FORBIDDEN.map((name) => [name, `${MARK}${name}`]), ...FORBIDDEN.map((name) => [`globalThis.${name}`, `${MARK}globalThis_${name}`])]);
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: options.format,
    globalName: 'toolstream',
    write: false,
    metafile: true,
    logLevel: 'silent',
    ...(options.marked === false ? {} : { define }), // the markers would be free names: a bundle to run has none
    external: [...(options.external ?? [])],
  });
  return { code: result.outputFiles[0]!.text, metafile: result.metafile };
}

/** The markers left in `code`, each with the source file esbuild's comments name before it. */
function markersIn(code: string): string[] {
  const found: string[] = [];
  let file = '?';
  for (const line of code.split('\n')) {
    const source = /^\s*\/\/ (\S+\.[cm]?[jt]s)$/.exec(line);
    if (source !== null) file = source[1]!;
    for (const [, name] of line.matchAll(new RegExp(`${MARK}(\\w+)`, 'g'))) found.push(`${file}: ${name}`);
  }
  return found;
}

const nodeImports = (metafile: Metafile): string[] =>
  Object.entries(metafile.inputs).flatMap(([file, input]) => input.imports.filter((i) => i.path.startsWith('node:') || i.external === true).map((i) => `${file} → ${i.path}`));

describe('the core entry bundled for a browser', () => {
  it('imports no node: module and uses neither process nor Buffer, but for the runtime lookup in util/host.ts', async () => {
    const { code, metafile } = await bundle('src/index.ts', { format: 'esm' });
    expect(nodeImports(metafile)).toEqual([]);
    expect(Object.keys(metafile.inputs).filter((file) => file.startsWith('src/node/'))).toEqual([]);
    expect(markersIn(code)).toEqual(['src/util/host.ts: globalThis_process']);
  });

  it('every subpath the README says runs anywhere too (their peers are the app’s own)', async () => {
    const peers = ['ai', '@anthropic-ai/sdk', 'openai', '@modelcontextprotocol/sdk', '@opentelemetry/api', 'fast-check'];
    const entries = ['src/adapters/ai-sdk/index.ts', 'src/adapters/anthropic/index.ts', 'src/adapters/openai/index.ts', 'src/mcp/index.ts', 'src/otel/index.ts', 'src/testing/index.ts'];
    for (const entry of entries) {
      const { code, metafile } = await bundle(entry, { format: 'esm', external: peers.flatMap((peer) => [peer, `${peer}/*`]) });
      expect(nodeImports(metafile).filter((line) => !peers.some((peer) => line.endsWith(`→ ${peer}`) || line.includes(`→ ${peer}/`))), entry).toEqual([]);
      expect(markersIn(code).filter((marker) => marker !== 'src/util/host.ts: globalThis_process'), entry).toEqual([]);
    }
  });

  it('runs with web-standard globals alone: a durable turn suspends and resumes, an observer that throws is a console warning', async () => {
    const { code } = await bundle('test/portability/webScenario.ts', { format: 'iife', marked: false });
    const warnings: unknown[] = [];
    const web = {
      crypto: globalThis.crypto,
      TextEncoder,
      TextDecoder,
      performance,
      AbortController,
      AbortSignal,
      DOMException,
      EventTarget,
      Event,
      URL,
      setTimeout,
      clearTimeout,
      setInterval,
      clearInterval,
      queueMicrotask,
      structuredClone,
      console: { ...console, warn: (...args: unknown[]) => warnings.push(args.join(' ')) },
    };
    const context = createContext({ ...web });
    runInContext(`${code}\nglobalThis.toolstream = toolstream;`, context);
    expect(runInContext('typeof process + typeof Buffer + typeof require', context)).toBe('undefinedundefinedundefined');
    const outcome = (await runInContext('toolstream.runScenario()', context)) as unknown;
    expect(outcome).toEqual({ first: [['c1', 'suspended', 'approval_pending']], pending: 1, resumed: [['c1', 'ok', 'sent to ada']] });
    await new Promise((resolve) => setTimeout(resolve, 50)); // observers are told after the result is given out
    expect(warnings.length).toBeGreaterThan(0);
    expect(String(warnings[0])).toMatch(/ToolstreamObserverWarning TOOLSTREAM_OBSERVER_ERROR\) an observer failed on the result of call "?c1"?.*metrics down/);
  });
});

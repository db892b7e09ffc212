// A TypeDoc plugin (typedoc.json `plugin`): names each module of the API reference by the import a
// user writes — `toolstream`, `toolstream/anthropic` — rather than by its folder under src/
// (`index`, `adapters/anthropic`). tsup.config.ts says which source builds each subpath.
import { readFileSync } from 'node:fs';
import { Converter, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  const config = readFileSync(new URL('../tsup.config.ts', import.meta.url), 'utf8');
  const names = new Map();
  for (const [, entry, source] of config.matchAll(/^\s*'?([\w-]+)'?: 'src\/([\w/.-]+)\.ts',$/gm)) {
    // TypeDoc's own name for an entry point: its path under src/, without a trailing `/index`.
    const folder = source === 'index' ? 'index' : source.replace(/\/index$/, '');
    names.set(folder, entry === 'index' ? 'toolstream' : `toolstream/${entry}`);
  }
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (_context, reflection) => {
    if (reflection.kindOf(ReflectionKind.Module) && names.has(reflection.name)) reflection.name = names.get(reflection.name);
  });
}

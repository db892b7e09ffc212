import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.js';
import {
  RestrictionSet,
  type RestrictionLayer,
  type RestrictionVerdict,
} from '../../src/util/restrictionSet.js';
import { globMatches, recase } from '../support/globs.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

const tool = (name: string) => ({ name });

describe('RestrictionSet', () => {
  it('allows a tool no layer mentions', () => {
    const set = new RestrictionSet([{ scope: 'host', deny: ['bash'] }, { scope: 'sub', allow: ['write_*'] }]);
    expect(set.resolve('read_file')).toEqual({ allowed: true });
    expect(new RestrictionSet([]).isAllowed('anything')).toBe(true);
  });

  it('restores a host-denied tool that a nearer scope allows (exemption)', () => {
    const set = new RestrictionSet([
      { scope: 'host', deny: ['write_*'] },
      { scope: 'preset', allow: ['write_comment'] },
    ]);
    expect(set.resolve('write_comment')).toEqual({ allowed: true, scope: 'preset', pattern: 'write_comment' });
    expect(set.resolve('write_file')).toEqual({ allowed: false, scope: 'host', pattern: 'write_*' });
  });

  it('rejects a tool denied in both the host and a nearer scope', () => {
    const set = new RestrictionSet([{ scope: 'host', deny: ['bash'] }, { scope: 'sub', deny: ['ba*'] }]);
    expect(set.resolve('bash')).toEqual({ allowed: false, scope: 'sub', pattern: 'ba*' });
  });

  it('lets the nearest mentioning layer win over farther ones, in both directions', () => {
    const set = new RestrictionSet([
      { scope: 'host', deny: ['mcp__*'] },
      { scope: 'preset', allow: ['mcp__*'] },
      { scope: 'sub', deny: ['mcp__gh__*'] },
    ]);
    expect(set.resolve('mcp__gh__issue')).toEqual({ allowed: false, scope: 'sub', pattern: 'mcp__gh__*' });
    expect(set.resolve('mcp__fs__read')).toEqual({ allowed: true, scope: 'preset', pattern: 'mcp__*' });
    const reversed = new RestrictionSet([
      { scope: 'host', allow: ['mcp__*'] },
      { scope: 'preset', deny: ['mcp__*'] },
      { scope: 'sub', allow: ['mcp__gh__*'] },
    ]);
    expect(reversed.resolve('mcp__gh__issue')).toEqual({ allowed: true, scope: 'sub', pattern: 'mcp__gh__*' });
    expect(reversed.resolve('mcp__fs__read')).toEqual({ allowed: false, scope: 'preset', pattern: 'mcp__*' });
  });

  it('lets deny beat allow within one layer', () => {
    const set = new RestrictionSet([{ scope: 'host', allow: ['*'], deny: ['bash'] }]);
    expect(set.resolve('bash')).toEqual({ allowed: false, scope: 'host', pattern: 'bash' });
    expect(set.resolve('grep')).toEqual({ allowed: true, scope: 'host', pattern: '*' });
  });

  it('reports the first matching pattern of the deciding list', () => {
    const set = new RestrictionSet([{ scope: 'host', deny: ['*_file', 'read_*'] }]);
    expect(set.resolve('read_file').pattern).toBe('*_file');
  });

  it('treats allow as an exemption, not an allowlist', () => {
    const set = new RestrictionSet([{ scope: 'host', allow: ['read_file'] }]);
    expect(set.isAllowed('bash')).toBe(true);
  });

  it('filter keeps the allowed tools in their order', () => {
    const set = new RestrictionSet([{ scope: 'host', deny: ['write_*', 'bash'] }, { scope: 'sub', allow: ['write_note'] }]);
    const tools = ['write_file', 'read_file', 'bash', 'write_note', 'grep'].map(tool);
    expect(set.filter(tools).map((t) => t.name)).toEqual(['read_file', 'write_note', 'grep']);
  });

  it('extend() returns a child with a nearer layer and leaves the parent unchanged', () => {
    const host = new RestrictionSet([{ scope: 'host', deny: ['write_*'] }]);
    const child = host.extend({ scope: 'sub', allow: ['write_file'], deny: ['grep'] });
    expect(child.isAllowed('write_file')).toBe(true);
    expect(child.isAllowed('grep')).toBe(false);
    expect(host.isAllowed('write_file')).toBe(false);
    expect(host.isAllowed('grep')).toBe(true);
    expect(host.layers.map((l) => l.scope)).toEqual(['host']);
    expect(child.layers.map((l) => l.scope)).toEqual(['host', 'sub']);
    expect(child.extend({ scope: 'grandchild', deny: ['write_file'] }).isAllowed('write_file')).toBe(false);
  });

  it('copies and freezes its layers and their pattern lists', () => {
    const deny = ['bash'];
    const layers: RestrictionLayer[] = [{ scope: 'host', deny }];
    const set = new RestrictionSet(layers);
    deny.push('grep');
    layers.push({ scope: 'sub', deny: ['*'] });
    expect(set.isAllowed('grep')).toBe(true);
    expect(set.layers).toEqual([{ scope: 'host', allow: [], deny: ['bash'] }]);
    expect(Object.isFrozen(set.layers)).toBe(true);
    expect(Object.isFrozen(set.layers[0])).toBe(true);
    expect(Object.isFrozen(set.layers[0]?.deny)).toBe(true);
  });

  it.each([
    ['not an array', 'host', 'layers', 'RestrictionSet: `layers` must be an array of restriction layers; received "host"'],
    ['a null layer', [null], 'layers[0]', 'RestrictionSet: `layers[0]` must be an object with a scope; received null'],
    ['a hole', [, { scope: 'x' }], 'layers[0]', 'RestrictionSet: `layers[0]` must be an object with a scope; received undefined'],
    ['no scope', [{ deny: ['a'] }], 'layers[0].scope', 'RestrictionSet: `layers[0].scope` must be a non-empty string; received undefined'],
    ['an empty scope', [{ scope: '' }], 'layers[0].scope', 'RestrictionSet: `layers[0].scope` must be a non-empty string; received ""'],
    ['allow not an array', [{ scope: 'h' }, { scope: 's', allow: 'read_*' }], 'layers[1].allow', 'RestrictionSet: `layers[1].allow` must be an array of glob strings; received "read_*"'],
    ['deny null', [{ scope: 'h', deny: null }], 'layers[0].deny', 'RestrictionSet: `layers[0].deny` must be an array of glob strings; received null'],
    ['a number pattern', [{ scope: 'h' }, { scope: 's', deny: [42] }], 'layers[1].deny[0]', 'RestrictionSet: `layers[1].deny[0]` must be a non-empty glob string; received 42'],
    ['an empty pattern', [{ scope: 'h', allow: ['a', ''] }], 'layers[0].allow[1]', 'RestrictionSet: `layers[0].allow[1]` must be a non-empty glob string; received ""'],
  ])('rejects %s with a ConfigError naming the option', (_, layers, option, message) => {
    const build = () => new RestrictionSet(layers as never);
    expect(build).toThrow(TypeError); // a ConfigError is a TypeError still
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(expect.objectContaining({ code: 'invalid_config', where: 'RestrictionSet', option }));
    expect(build).toThrow(message);
  });

  it('matches deny patterns regardless of case, allow patterns exactly', () => {
    const set = new RestrictionSet([
      { scope: 'host', deny: ['mcp__gh__delete_*', 'write_*'] },
      { scope: 'preset', allow: ['write_comment'] },
    ]);
    expect(set.resolve('mcp__gh__Delete_Repo')).toEqual({ allowed: false, scope: 'host', pattern: 'mcp__gh__delete_*' });
    expect(set.isAllowed('MCP__GH__DELETE_REPO')).toBe(false);
    expect(set.resolve('write_comment')).toEqual({ allowed: true, scope: 'preset', pattern: 'write_comment' });
    // The exemption names `write_comment`; a case variant of it is not exempted, and the host's deny holds.
    expect(set.resolve('Write_Comment')).toEqual({ allowed: false, scope: 'host', pattern: 'write_*' });
    expect(set.filter(['Write_File', 'read_file'].map(tool)).map((t) => t.name)).toEqual(['read_file']);
  });

  it('names the extending layer when extend() is given a bad one', () => {
    const host = new RestrictionSet([{ scope: 'host' }]);
    const extendBadly = () => host.extend({ scope: 'sub', deny: [7 as never] });
    expect(extendBadly).toThrow(ConfigError);
    expect(extendBadly).toThrow(expect.objectContaining({ code: 'invalid_config', where: 'RestrictionSet.extend', option: 'layer.deny[0]' }));
    expect(extendBadly).toThrow('RestrictionSet.extend: `layer.deny[0]` must be a non-empty glob string; received 7');
    expect(() => host.extend(undefined as never)).toThrow('RestrictionSet.extend: `layer` must be an object with a scope');
  });
});

describe('RestrictionSet properties', () => {
  const names = ['read_file', 'read_dir', 'write_file', 'bash', 'mcp__gh__issue', 'mcp__gh__pr'];
  const name = fc.constantFrom(...names);
  const pattern = fc.constantFrom(...names, 'read_*', '*_file', 'mcp__gh__*', '*', 'bash?', '?ash', 'write_*', '*r*');
  const layer: fc.Arbitrary<RestrictionLayer> = fc.record(
    {
      scope: fc.constantFrom('host', 'preset', 'sub', 'grandchild'),
      allow: fc.array(pattern, { maxLength: 3 }),
      deny: fc.array(pattern, { maxLength: 3 }),
    },
    { requiredKeys: ['scope'] },
  );
  const layers = fc.array(layer, { maxLength: 5 });


  /**
   * DESIGN.md's rule, written out: the nearest layer mentioning the tool decides; deny wins inside it.
   * Deny patterns ignore case, allow patterns do not.
   */
  function referenceResolve(stack: readonly RestrictionLayer[], tool: string): RestrictionVerdict {
    for (const { scope, allow = [], deny = [] } of [...stack].reverse()) {
      const denied = deny.find((glob) => globMatches(glob.toLowerCase(), tool.toLowerCase()));
      const allowed = allow.find((glob) => globMatches(glob, tool));
      if (denied !== undefined) return { allowed: false, scope, pattern: denied };
      if (allowed !== undefined) return { allowed: true, scope, pattern: allowed };
    }
    return { allowed: true };
  }

  it('resolve agrees with the reference rule', () => {
    fc.assert(
      fc.property(layers, name, (stack, tool) => {
        expect(new RestrictionSet(stack).resolve(tool)).toEqual(referenceResolve(stack, tool));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  const flips = fc.array(fc.boolean(), { minLength: 1, maxLength: 8 });

  it('resolve agrees with the reference rule for case variants of the names', () => {
    fc.assert(
      fc.property(layers, name, flips, (stack, tool, flip) => {
        const variant = recase(tool, flip);
        expect(new RestrictionSet(stack).resolve(variant)).toEqual(referenceResolve(stack, variant));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('a case variant of a name is never allowed when the name itself is denied, unless an exemption spells the variant', () => {
    fc.assert(
      fc.property(layers, name, flips, (stack, tool, flip) => {
        const set = new RestrictionSet(stack);
        const variant = recase(tool, flip);
        const exempted = stack.some((layer) => (layer.allow ?? []).some((glob) => globMatches(glob, variant)));
        if (!set.isAllowed(tool) && !exempted) expect(set.isAllowed(variant)).toBe(false);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('filter(tools) equals tools.filter(t => isAllowed(t.name))', () => {
    fc.assert(
      fc.property(layers, fc.array(name.map(tool), { maxLength: 10 }), (stack, tools) => {
        const set = new RestrictionSet(stack);
        expect(set.filter(tools)).toEqual(tools.filter((t) => set.isAllowed(t.name)));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('extend never changes the parent, and the new layer decides whatever it mentions', () => {
    fc.assert(
      fc.property(layers, layer, (stack, nearer) => {
        const parent = new RestrictionSet(stack);
        const before = names.map((n) => parent.resolve(n));
        const child = parent.extend(nearer);
        expect(names.map((n) => parent.resolve(n))).toEqual(before);
        expect(parent.layers).toHaveLength(stack.length);
        for (const n of names) {
          const own = referenceResolve([nearer], n);
          expect(child.resolve(n)).toEqual(own.scope === undefined ? parent.resolve(n) : own);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

/** Glob semantics over plain strings, case-sensitive, independent of compileGlob: the tests' oracle. */
export const globMatches = (glob: string, name: string): boolean =>
  glob === '' ? name === ''
  : glob[0] === '*' ? globMatches(glob.slice(1), name) || (name !== '' && globMatches(glob, name.slice(1)))
  : name !== '' && (glob[0] === '?' || glob[0] === name[0]) && globMatches(glob.slice(1), name.slice(1));

/** The name with each letter's case flipped where `flips` says so (cycling through it). */
export const recase = (name: string, flips: readonly boolean[]): string =>
  [...name].map((c, i) => (flips[i % flips.length] ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c)).join('');

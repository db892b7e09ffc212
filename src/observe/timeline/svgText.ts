/**
 * What text and attribute values cannot hold as they are: the markup characters; tab, line feed and
 * carriage return (an attribute would read them as spaces, text would turn `\r` into `\n`); and every
 * code unit XML 1.0 has no character for — the C0 controls but those three, lone surrogates (with the
 * `u` flag a well-formed pair is one code point and never matches), U+FFFE and U+FFFF.
 */
const UNSAFE = /[&<>"'\t\n\r\0-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/gu;

/**
 * Text and attribute values for SVG markup that always parse as XML: `& < > " '`, tab, line feed and
 * carriage return escaped as character references (they read back as given); a character XML 1.0
 * cannot hold even as a reference (a call id the model sent is anything) replaced by one it can —
 * a C0 control by its picture (U+0000 → U+2400 `␀`), a lone surrogate, U+FFFE or U+FFFF by U+FFFD `�`.
 */
export function escapeXml(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    if ('&<>"\'\t\n\r'.includes(c)) return `&#${code};`;
    return code < 0x20 ? String.fromCharCode(0x2400 + code) : '\uFFFD';
  });
}

/**
 * How many monospace cells `text` takes: one per code point, two for the wide ones (CJK, Hangul,
 * fullwidth forms, emoji), which a monospace font's fallback draws about twice as wide.
 */
export function textCells(text: string): number {
  let cells = 0;
  for (const c of text) cells += isWide(c.codePointAt(0)!) ? 2 : 1;
  return cells;
}

/**
 * `text` in lines of at most `cells` cells (at least one code point a line), never between the halves
 * of a surrogate pair: the whole text, in order, so a label too long for one line is wrapped, not cut.
 */
export function wrapText(text: string, cells: number): string[] {
  const lines: string[] = [];
  let line = '';
  let used = 0;
  for (const c of text) {
    const width = isWide(c.codePointAt(0)!) ? 2 : 1;
    if (used + width > cells && line !== '') {
      lines.push(line);
      line = '';
      used = 0;
    }
    line += c;
    used += width;
  }
  return line === '' && lines.length > 0 ? lines : [...lines, line];
}

function isWide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
}

/** An element with attributes in the order given (so the output is stable), escaped. */
export function element(name: string, attributes: Readonly<Record<string, string | number>>, content?: string): string {
  const attrs = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(String(value))}"`)
    .join('');
  return content === undefined ? `<${name}${attrs}/>` : `<${name}${attrs}>${content}</${name}>`;
}

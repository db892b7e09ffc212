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

/** `text` cut to `room` code units, the last of them `…`, never between the halves of a surrogate pair. */
export function shorten(text: string, room: number): string {
  if (text.length <= room) return text;
  const end = room - 1;
  const code = text.charCodeAt(end - 1);
  return `${text.slice(0, code >= 0xd800 && code <= 0xdbff ? end - 1 : end)}…`;
}

/** An element with attributes in the order given (so the output is stable), escaped. */
export function element(name: string, attributes: Readonly<Record<string, string | number>>, content?: string): string {
  const attrs = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(String(value))}"`)
    .join('');
  return content === undefined ? `<${name}${attrs}/>` : `<${name}${attrs}>${content}</${name}>`;
}

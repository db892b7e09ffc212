/** Text and attribute values for SVG markup: `&`, `<`, `>` and quotes escaped. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** An element with attributes in the order given (so the output is stable), escaped. */
export function element(name: string, attributes: Readonly<Record<string, string | number>>, content?: string): string {
  const attrs = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(String(value))}"`)
    .join('');
  return content === undefined ? `<${name}${attrs}/>` : `<${name}${attrs}>${content}</${name}>`;
}

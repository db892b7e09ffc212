/**
 * JSON Schema → TypeScript types, for {@link describeTools}: one tool's input schema as a parameter type,
 * its references as aliases. Whatever TypeScript cannot say becomes `unknown` (it only widens), and no
 * schema can make it loop or explode (a depth cap and a node budget).
 */
import { isRecord } from '../util/validate.js';

/** A rendered type, with how tightly its text binds (to know when it needs parentheses). */
interface Rendered {
  readonly text: string;
  readonly kind: 'primary' | 'union' | 'intersection';
}

/** Where a schema is rendered. */
interface Scope {
  /** Schemas above this one; past {@link MAX_DEPTH} the rest is `unknown` (and a cyclic object cannot overflow the stack). */
  readonly depth: number;
  /**
   * Inside an object, array or tuple type, where TypeScript defers a reference, so a `$ref` may name its
   * alias. Elsewhere in an alias's body (a union, an intersection) naming an alias of the same cycle is a
   * circularity error, so the reference is inlined instead.
   */
  readonly guarded: boolean;
  /** References being inlined (unguarded) right now; meeting one again renders `unknown`. */
  readonly inlining: ReadonlySet<string>;
}

export const INDENT = '  ';
const MAX_DEPTH = 64;
/** Schema nodes rendered per tool (aliases included); past it everything is `unknown`, so no schema can explode. */
const NODE_BUDGET = 10_000;
/** Objects this short, without comments, are written on one line. */
const INLINE_WIDTH = 72;
export const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/;
/** Valid keys that still read as something else, or that other tooling treats specially. */
const QUOTED_KEYS = new Set(['__proto__', 'constructor']);
export const RESERVED_WORDS = new Set(
  ('break case catch class const continue debugger default delete do else enum export extends false finally for ' +
    'function if import in instanceof new null return super switch this throw true try typeof var void while with ' +
    'yield let static implements interface package private protected public await undefined')
    .split(' '),
);

const UNKNOWN: Rendered = { text: 'unknown', kind: 'primary' };
const NEVER: Rendered = { text: 'never', kind: 'primary' };
/**
 * A reference met again while it is being inlined. A union drops it (`A = B | string`, `B = A | number`
 * means `string | number`); anything else treats it as `unknown`.
 */
const CYCLE: Rendered = { text: 'unknown', kind: 'primary' };

/** Renders one tool's JSON Schema; references within it become aliases named after the tool. */
export class SchemaRenderer {
  private budget = NODE_BUDGET;
  /** Alias name of each reference (a JSON Pointer into this schema), in the order they were met. */
  private readonly aliases = new Map<string, string>();

  constructor(
    private readonly root: unknown,
    private readonly toolName: string,
    /** Every alias name taken so far, by any tool. */
    private readonly taken: Set<string>,
  ) {}

  /** The method's parameter type (the alias of the root, when the schema refers to itself). */
  parameter(): string {
    const { text } = this.render(this.root, 1, { depth: 0, guarded: true, inlining: new Set() });
    return this.aliases.get('#') ?? text;
  }

  /** `type … = …;` for every reference met, including those met while rendering the others. */
  aliasDeclarations(): string[] {
    const declarations: string[] = [];
    // A Map's iterator also visits the entries added while it runs: the references met in these bodies.
    for (const [ref, name] of this.aliases) {
      const body = this.render(this.resolve(ref), 0, { depth: 0, guarded: false, inlining: new Set([ref]) });
      declarations.push(`type ${name} = ${body.text};`);
    }
    return declarations;
  }

  private render(schema: unknown, level: number, scope: Scope): Rendered {
    if (--this.budget < 0 || scope.depth > MAX_DEPTH) return UNKNOWN;
    if (schema === false) return NEVER;
    if (!isRecord(schema)) return UNKNOWN; // `true`, and anything that is not a schema
    const inner: Scope = { ...scope, depth: scope.depth + 1 };
    const render = (child: unknown): Rendered => this.render(child, level, inner);
    // Every keyword applies at once, so what each says is intersected.
    const parts: Rendered[] = [];
    const base = this.base(schema, level, inner);
    if (base !== undefined) parts.push(base);
    if (typeof schema['$ref'] === 'string') parts.push(this.reference(schema['$ref'], level, inner));
    if (Array.isArray(schema['anyOf'])) parts.push(union(schema['anyOf'].map(render)));
    if (Array.isArray(schema['oneOf'])) parts.push(union(schema['oneOf'].map(render)));
    if (Array.isArray(schema['allOf'])) parts.push(intersection(schema['allOf'].map(render)));
    return intersection(parts);
  }

  /** What `const`, `enum` or `type` (or, without `type`, the object and array keywords) say. */
  private base(schema: Readonly<Record<string, unknown>>, level: number, scope: Scope): Rendered | undefined {
    if (Object.hasOwn(schema, 'const')) return literal(schema['const']);
    if (Array.isArray(schema['enum'])) return union(schema['enum'].map(literal));
    const types = typeNames(schema);
    if (types === undefined) return undefined;
    const rendered = types.map((type): Rendered => {
      switch (type) {
        case 'string':
        case 'number':
        case 'boolean':
        case 'null':
          return { text: type, kind: 'primary' };
        case 'integer':
          return { text: 'number', kind: 'primary' };
        case 'object':
          return this.object(schema, level, { ...scope, guarded: true });
        case 'array':
          return this.array(schema, level, { ...scope, guarded: true });
        default:
          return UNKNOWN;
      }
    });
    if (schema['nullable'] === true) rendered.push({ text: 'null', kind: 'primary' }); // OpenAPI 3.0
    return union(rendered);
  }

  private object(schema: Readonly<Record<string, unknown>>, level: number, scope: Scope): Rendered {
    const properties = isRecord(schema['properties']) ? Object.entries(schema['properties']) : [];
    const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
    const pad = INDENT.repeat(level + 1);
    const lines: string[] = [];
    const propertyTypes: Rendered[] = [];
    let commented = false;
    for (const [name, property] of properties) {
      const type = this.render(property, level + 1, scope);
      propertyTypes.push(type);
      const comment = docComment(propertyDoc(property), level + 1, false);
      commented ||= comment.length > 0;
      lines.push(...comment, `${pad}${propertyKey(name)}${required.has(name) ? '' : '?'}: ${type.text};`);
    }
    const rest = this.additionalProperties(schema, level + 1, scope);
    if (rest !== undefined) {
      // Every declared property must fit the index signature too, `undefined` included when it is optional
      // (unless exactOptionalPropertyTypes is on).
      const optional = properties.some(([name]) => !required.has(name));
      const fits = [rest, ...propertyTypes, ...(optional ? [{ text: 'undefined', kind: 'primary' } as const] : [])];
      lines.push(`${pad}[key: string]: ${union(fits).text};`);
    }
    if (lines.length === 0) return { text: '{}', kind: 'primary' };
    const inline = `{ ${lines.map((line) => line.trimStart()).join(' ').slice(0, -1)} }`;
    if (!commented && !inline.includes('\n') && inline.length <= INLINE_WIDTH) return { text: inline, kind: 'primary' };
    return { text: `{\n${lines.join('\n')}\n${INDENT.repeat(level)}}`, kind: 'primary' };
  }

  /** The type of keys beyond `properties`; `undefined` when there may be none (or JSON Schema does not restrict them). */
  private additionalProperties(schema: Readonly<Record<string, unknown>>, level: number, scope: Scope): Rendered | undefined {
    const additional = schema['additionalProperties'];
    const patterns = isRecord(schema['patternProperties']) ? Object.values(schema['patternProperties']) : [];
    const types = patterns.map((pattern) => this.render(pattern, level, scope));
    if (additional !== undefined && additional !== false) types.push(this.render(additional, level, scope));
    return types.length === 0 ? undefined : union(types);
  }

  private array(schema: Readonly<Record<string, unknown>>, level: number, scope: Scope): Rendered {
    const render = (item: unknown): Rendered => this.render(item, level, scope);
    // 2020-12 tuples are `prefixItems` + `items`; draft-7 tuples are an `items` array + `additionalItems`.
    const { prefixItems, items, additionalItems, minItems } = schema;
    const prefix = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : undefined;
    const rest = Array.isArray(prefixItems) ? items : Array.isArray(items) ? additionalItems : items;
    const restType = rest === undefined ? UNKNOWN : render(rest);
    if (prefix === undefined) return rest === false ? { text: '[]', kind: 'primary' } : arrayOf(restType);
    const required = typeof minItems === 'number' ? minItems : 0;
    const elements = prefix.map((item, i) => (i < required ? render(item).text : `${parenthesized(render(item))}?`));
    if (rest !== false) elements.push(`...${arrayOf(restType).text}`);
    return { text: `[${elements.join(', ')}]`, kind: 'primary' };
  }

  /** A local `$ref`: its alias where TypeScript defers it, its target inlined elsewhere, `unknown` if unresolvable. */
  private reference(ref: string, level: number, scope: Scope): Rendered {
    const target = this.resolve(ref);
    if (target === undefined) return UNKNOWN;
    if (scope.guarded) return { text: this.aliasOf(ref), kind: 'primary' };
    if (scope.inlining.has(ref)) return CYCLE;
    return this.render(target, level, { ...scope, inlining: new Set([...scope.inlining, ref]) });
  }

  private aliasOf(ref: string): string {
    let name = this.aliases.get(ref);
    if (name === undefined) {
      const defName = ref === '#' ? 'Input' : unescapePointer(ref.slice(ref.lastIndexOf('/') + 1));
      name = uniqueName(`${pascalCase(this.toolName) || 'Tool'}_${pascalCase(defName) || 'Def'}`, this.taken);
      this.aliases.set(ref, name);
    }
    return name;
  }

  /** The schema a local JSON Pointer reference (`#`, `#/$defs/Node`, …) points at. */
  private resolve(ref: string): unknown {
    if (ref !== '#' && !ref.startsWith('#/')) return undefined;
    let node: unknown = this.root;
    for (const segment of ref === '#' ? [] : ref.slice(2).split('/')) {
      const key = unescapePointer(segment);
      if (!(isRecord(node) || Array.isArray(node)) || !Object.hasOwn(node, key)) return undefined;
      node = (node as Readonly<Record<string, unknown>>)[key];
    }
    return node;
  }
}

/** The JSON types a schema allows: its `type`, or what its keywords imply; `undefined` when it does not say. */
function typeNames(schema: Readonly<Record<string, unknown>>): readonly string[] | undefined {
  const { type } = schema;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.map((name) => (typeof name === 'string' ? name : ''));
  if (['properties', 'additionalProperties', 'patternProperties'].some((key) => key in schema)) return ['object'];
  if (['items', 'prefixItems'].some((key) => key in schema)) return ['array'];
  return undefined;
}

/** A JSON value as a literal type (JSON is valid TypeScript, once the line separators are escaped). */
function literal(value: unknown): Rendered {
  const json = JSON.stringify(value) as string | undefined;
  return json === undefined ? UNKNOWN : { text: escapeLineSeparators(json), kind: 'primary' };
}

function union(parts: readonly Rendered[]): Rendered {
  const live = parts.filter((part) => part !== CYCLE);
  if (live.length === 0 && parts.length > 0) return CYCLE;
  const texts = [...new Set(live.map((part) => part.text))];
  if (texts.includes('unknown')) return UNKNOWN;
  const members = texts.filter((text) => text !== 'never');
  if (members.length <= 1) return members.length === 0 ? NEVER : live.find((part) => part.text === members[0])!;
  return { text: members.join(' | '), kind: 'union' };
}

function intersection(parts: readonly Rendered[]): Rendered {
  const members = parts.filter((part) => part.text !== 'unknown');
  if (members.length <= 1) return members[0] ?? (parts.includes(CYCLE) ? CYCLE : UNKNOWN);
  return { text: members.map(parenthesized).join(' & '), kind: 'intersection' };
}

function arrayOf(element: Rendered): Rendered {
  return { text: `${parenthesized(element)}[]`, kind: 'primary' };
}

function parenthesized(type: Rendered): string {
  return type.kind === 'primary' ? type.text : `(${type.text})`;
}

/** A property or method name: as is when it is a plain identifier, quoted otherwise. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) && !QUOTED_KEYS.has(name) ? name : escapeLineSeparators(JSON.stringify(name));
}

/** What a property's doc comment says: its description and its default. */
function propertyDoc(property: unknown): string {
  if (!isRecord(property)) return '';
  const lines = typeof property['description'] === 'string' ? [property['description']] : [];
  const defaultValue = Object.hasOwn(property, 'default') ? JSON.stringify(property['default']) : undefined;
  if (defaultValue !== undefined) lines.push(`@default ${defaultValue}`);
  return lines.join('\n');
}

/** A doc comment's lines at `level`, `*\/` escaped so the text cannot end it; none for blank text. */
export function docComment(text: string, level: number, block: boolean): string[] {
  const pad = INDENT.repeat(level);
  const lines = text.split(LINE_BREAK).map((line) => line.replaceAll('*/', '*\\/').trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  if (lines.length === 0) return [];
  if (lines.length === 1 && !block) return [`${pad}/** ${lines[0]} */`];
  return [`${pad}/**`, ...lines.map((line) => (line === '' ? `${pad} *` : `${pad} * ${line}`)), `${pad} */`];
}

/** `read_file` → `ReadFile`, `__schema0` → `Schema0`. */
function pascalCase(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

/** `base` as an identifier no one has taken yet (numbered if need be), now taken. */
function uniqueName(base: string, taken: Set<string>): string {
  const start = /^[0-9]/.test(base) ? `T${base}` : base;
  let name = start;
  for (let n = 2; taken.has(name); n++) name = `${start}${n}`;
  taken.add(name);
  return name;
}

function unescapePointer(segment: string): string {
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment); // a reference is a URI fragment
  } catch {
    // not percent-encoded after all
  }
  return decoded.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** TypeScript, unlike JavaScript, ends a string literal at U+2028 and U+2029. */
function escapeLineSeparators(text: string): string {
  return text.replace(/[\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16)}`);
}

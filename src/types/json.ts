// JSON data as toolstream passes it on (progress reports). (A leaf: imports only from types/.)

/** A JSON value: what `ctx.progress` accepts and a `progress` event carries. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

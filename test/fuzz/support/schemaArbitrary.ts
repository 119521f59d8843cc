import fc from "fast-check";

/** A JSON Schema (2020-12 subset: what zod's `toJSONSchema` and the OpenAPI document use). */
export type JsonSchema = Record<string, unknown>;

export type Path = (string | number)[];

export type SchemaArbitraryOptions = {
  /** `#/components/schemas/X` targets (the OpenAPI document's components). */
  definitions?: Record<string, JsonSchema>;
  /** An arbitrary for a field whose valid values the live stack decides (listed model ids, job ids, safe URLs). */
  override?: (path: Path, schema: JsonSchema) => fc.Arbitrary<unknown> | undefined;
  /** Upper bound for unbounded arrays and strings (keeps valid requests cheap; hostile sizes come from mutations). */
  maxItems?: number;
  maxLength?: number;
};

const UNBOUNDED_INT = 2 ** 53 - 1;

/** Resolves a local `$ref` against the document's components. */
export function resolve(schema: JsonSchema, definitions: Record<string, JsonSchema> = {}): JsonSchema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === "string" && hops < 20; hops++) {
    const name = current.$ref.replace(/^#\/(components\/schemas|\$defs|definitions)\//, "");
    const target = definitions[name];
    if (!target) throw new Error(`unresolved $ref ${current.$ref}`);
    current = target;
  }
  return current;
}

/** Values the schema accepts, built from the schema itself (so the fuzzer follows the API as it changes). */
export function arbitraryOf(
  schema: JsonSchema,
  options: SchemaArbitraryOptions = {},
  path: Path = [],
): fc.Arbitrary<unknown> {
  const custom = options.override?.(path, schema);
  if (custom) return custom;
  const node = resolve(schema, options.definitions);
  if ("const" in node) return fc.constant(node.const);
  if (Array.isArray(node.enum)) return fc.constantFrom(...(node.enum as unknown[]));
  const branches = (node.oneOf ?? node.anyOf) as JsonSchema[] | undefined;
  if (branches) return fc.oneof(...branches.map((branch) => arbitraryOf(branch, options, path)));
  const types = Array.isArray(node.type) ? (node.type as string[]) : [node.type as string | undefined];
  return fc.oneof(...types.map((type) => arbitraryOfType(type, node, options, path)));
}

function arbitraryOfType(
  type: string | undefined,
  node: JsonSchema,
  options: SchemaArbitraryOptions,
  path: Path,
): fc.Arbitrary<unknown> {
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer": {
      const min = numberBound(node, "minimum", "exclusiveMinimum", 1) ?? -UNBOUNDED_INT;
      const max = numberBound(node, "maximum", "exclusiveMaximum", -1) ?? UNBOUNDED_INT;
      return fc.oneof(
        fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1000) }).filter((n) => n >= min && n <= max),
        fc.integer({ min, max }),
        fc.constantFrom(min, max),
      );
    }
    case "number": {
      const min = typeof node.minimum === "number" ? node.minimum : -1e9;
      const max = typeof node.maximum === "number" ? node.maximum : 1e9;
      return fc.oneof(fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(min, max));
    }
    case "string":
      return stringOf(node, options);
    case "array": {
      const items = (node.items ?? {}) as JsonSchema;
      const minLength = typeof node.minItems === "number" ? node.minItems : 0;
      const maxLength = typeof node.maxItems === "number" ? node.maxItems : minLength + (options.maxItems ?? 4);
      return fc.array(arbitraryOf(items, options, [...path, 0]), {
        minLength,
        maxLength: Math.min(maxLength, minLength + (options.maxItems ?? 4)),
      });
    }
    case "object":
    case undefined: {
      const properties = (node.properties ?? {}) as Record<string, JsonSchema>;
      if (type === undefined && Object.keys(properties).length === 0) return fc.jsonValue({ maxDepth: 2 });
      const required = (node.required ?? []) as string[];
      const model = Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [name, arbitraryOf(property, options, [...path, name])]),
      );
      return fc.record(model, { requiredKeys: required.filter((name) => name in properties) });
    }
    default:
      throw new Error(`schema type ${type} is not supported by the fuzzer`);
  }
}

function numberBound(node: JsonSchema, inclusive: string, exclusive: string, step: number): number | undefined {
  if (typeof node[inclusive] === "number") return node[inclusive];
  if (typeof node[exclusive] === "number") return (node[exclusive] as number) + step;
  return undefined;
}

function stringOf(node: JsonSchema, options: SchemaArbitraryOptions): fc.Arbitrary<string> {
  const minLength = typeof node.minLength === "number" ? node.minLength : 0;
  const maxLength = Math.min(
    typeof node.maxLength === "number" ? node.maxLength : Number.MAX_SAFE_INTEGER,
    minLength + (options.maxLength ?? 40),
  );
  if (typeof node.pattern === "string") {
    // `^[class]+$` with a length range: characters of the class, so the length bounds are met without filtering.
    const charClass = /^\^(\[[^\]]+\])\+\$$/.exec(node.pattern);
    if (charClass)
      return fc.string({
        unit: fc.stringMatching(new RegExp(`^${charClass[1]}$`)),
        minLength: Math.max(1, minLength),
        maxLength,
      });
    return fc
      .stringMatching(new RegExp(node.pattern))
      .filter(
        (value) => value.length >= minLength && value.length <= ((node.maxLength as number | undefined) ?? Infinity),
      );
  }
  if (node.format === "uri") return fc.webUrl();
  if (node.format === "date-time") return fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
  return fc.string({ unit: "grapheme", minLength, maxLength });
}

/** Every property path the schema names (objects and the first item of arrays), for targeted mutations. */
export function schemaPaths(schema: JsonSchema, definitions: Record<string, JsonSchema> = {}, depth = 4): Path[] {
  const found: Path[] = [];
  const walk = (node: JsonSchema, path: Path, left: number) => {
    if (left === 0) return;
    const resolved = resolve(node, definitions);
    for (const branch of ((resolved.oneOf ?? resolved.anyOf) as JsonSchema[] | undefined) ?? [])
      walk(branch, path, left);
    for (const [name, property] of Object.entries((resolved.properties ?? {}) as Record<string, JsonSchema>)) {
      found.push([...path, name]);
      walk(property, [...path, name], left - 1);
    }
    if (resolved.items) {
      found.push([...path, 0]);
      walk(resolved.items as JsonSchema, [...path, 0], left - 1);
    }
  };
  walk(schema, [], depth);
  const unique = new Map(found.map((path) => [JSON.stringify(path), path]));
  return [...unique.values()];
}

/**
 * Paths of the optional properties the schema names (not in their object's `required`), through nested objects and
 * the first item of arrays: where a client may send `null` for "absent" (issue 11 item 5).
 */
export function optionalPaths(schema: JsonSchema, definitions: Record<string, JsonSchema> = {}, depth = 4): Path[] {
  const found: Path[] = [];
  const walk = (node: JsonSchema, path: Path, left: number) => {
    if (left === 0) return;
    const resolved = resolve(node, definitions);
    for (const branch of ((resolved.oneOf ?? resolved.anyOf) as JsonSchema[] | undefined) ?? [])
      walk(branch, path, left);
    const required = new Set((resolved.required ?? []) as string[]);
    for (const [name, property] of Object.entries((resolved.properties ?? {}) as Record<string, JsonSchema>)) {
      if (!required.has(name)) found.push([...path, name]);
      walk(property, [...path, name], left - 1);
    }
    if (resolved.items) walk(resolved.items as JsonSchema, [...path, 0], left - 1);
  };
  walk(schema, [], depth);
  return [...new Map(found.map((path) => [JSON.stringify(path), path])).values()];
}

/** `value` with `null` at each of `paths` whose parent exists (a deep copy). */
export function withNulls(value: unknown, paths: Path[]): unknown {
  const copy = structuredClone(value);
  for (const path of paths) {
    let parent: unknown = copy;
    for (const step of path.slice(0, -1)) parent = (parent as Record<string | number, unknown> | null)?.[step];
    if (parent !== null && typeof parent === "object")
      (parent as Record<string | number, unknown>)[path.at(-1)!] = null;
  }
  return copy;
}

import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { JOB_ID_PATTERN } from "@credit-metered/client";
import fc from "fast-check";
import ipaddr from "ipaddr.js";
import type { FuzzCase, Intent, KeyKind } from "./fuzzCase.js";
import { contentTypes, corruptUtf8, hostileString, hostileValue, jsonText, nested, runOf, RawJson } from "./hostile.js";
import {
  arbitraryOf,
  optionalPaths,
  resolve,
  schemaPaths,
  withNulls,
  type JsonSchema,
  type Path,
} from "./schemaArbitrary.js";

/** What the generators derive requests from: the API's own schemas and the live catalog. */
export type GeneratorSources = {
  /** `z.toJSONSchema` of the gateway's zod body schemas (api/completions/requestSchema.ts, webhookSchemas.ts). */
  chatBody: JsonSchema;
  webhookBody: JsonSchema;
  /** The OpenAPI document the gateway serves (`GET /v1/openapi.json`). */
  openapi: {
    paths: Record<
      string,
      Record<
        string,
        {
          parameters?: { name: string; in: string; schema: JsonSchema }[];
          requestBody?: { content: Record<string, { schema: JsonSchema }> };
        }
      >
    >;
    components: { schemas: Record<string, JsonSchema> };
  };
  /** Listed model ids (`GET /v1/models`). */
  models: string[];
};

type Headers = [string, string][];
type Auth = { headers: Headers; key: KeyKind | undefined; label: string };

const bearer = (key: KeyKind) => `Bearer {{key:${key}}}`;

/** The key a request carries: mostly a funded or a 0-credit key, sometimes none or a broken header. */
const auth: fc.Arbitrary<Auth> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constant<Auth>({
      headers: [["Authorization", bearer("funded")]],
      key: "funded",
      label: "funded key",
    }),
  },
  {
    weight: 4,
    arbitrary: fc.constant<Auth>({
      headers: [["Authorization", bearer("broke")]],
      key: "broke",
      label: "0-credit key",
    }),
  },
  { weight: 1, arbitrary: fc.constant<Auth>({ headers: [], key: undefined, label: "no key" }) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          "Bearer",
          "Bearer ",
          "Basic Zm9vOmJhcg==",
          "Token {{key:funded}}",
          "Bearer {{key:funded}} extra",
          "Bearer  {{key:funded}}x",
        ),
        fc.stringMatching(/^[A-Za-z0-9]{32}$/).map((tail) => `Bearer svc_live_${tail}`),
        fc
          .string({
            unit: fc.integer({ min: 0x20, max: 0xff }).map((code) => String.fromCharCode(code)),
            maxLength: 300,
          })
          .map((junk) => `Bearer ${junk}`),
      )
      .map<Auth>((value) => ({ headers: [["Authorization", value]], key: undefined, label: "broken key" })),
  },
  {
    weight: 1,
    arbitrary: fc.constant<Auth>({
      headers: [
        ["Authorization", bearer("broke")],
        ["Authorization", bearer("funded")],
      ],
      key: undefined,
      label: "two keys",
    }),
  },
);

const latin1Text = (maxLength: number) =>
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((code) => code !== 0x7f)
      .map((code) => String.fromCharCode(code)),
    maxLength,
  });

/** Headers a client may add: request ids, odd Accept values, expectations, cookies, oversized values. */
const noise: fc.Arbitrary<Headers> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Headers>([]) },
  {
    weight: 4,
    arbitrary: fc.array(
      fc.oneof(
        latin1Text(300).map((value): [string, string] => ["X-Request-Id", value]),
        fc.constantFrom<[string, string]>(
          ["Accept", "text/event-stream"],
          ["Accept", "application/xml"],
          ["Accept", "*/*;q=0"],
          ["Accept-Charset", "utf-16"],
          ["Accept-Encoding", "gzip, br, zstd"],
          ["Expect", "100-continue"],
          ["Expect", "teapot"],
          ["Cookie", "session=%ZZ; ; ="],
          ["X-Forwarded-For", "1.2.3.4, not-an-ip"],
          ["Origin", "https://evil.invalid"],
          ["Range", "bytes=0-1"],
          ["If-None-Match", "*"],
          ["X-HTTP-Method-Override", "DELETE"],
          ["Content-Type", "text/plain"],
        ),
      ),
      { minLength: 1, maxLength: 4 },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 8_000, max: 40_000 }).map((size): Headers => [["X-Fuzz-Padding", "p".repeat(size)]]),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 50, max: 400 })
      .map((count): Headers => Array.from({ length: count }, (_, index) => [`X-Fuzz-${index}`, "1"])),
  },
);

type Encoded = { headers: Headers; body: Buffer; intact: boolean; label: string };

/** How a JSON text goes on the wire: plainly, with odd content types, corrupt UTF-8, or (corrupt) compression. */
function encodeBody(text: string): fc.Arbitrary<Encoded> {
  const json = Buffer.from(text, "utf8");
  const plain: Encoded = { headers: [["Content-Type", "application/json"]], body: json, intact: true, label: "json" };
  const compressors = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant(plain) },
    {
      weight: 2,
      arbitrary: contentTypes.map<Encoded>((type) => ({
        headers: type === undefined ? [] : [["Content-Type", type]],
        body: json,
        intact: false,
        label: `content-type ${String(type)}`,
      })),
    },
    {
      weight: 2,
      arbitrary: corruptUtf8.map<Encoded>((corrupt) => ({
        ...plain,
        body: corrupt(json),
        intact: false,
        label: "corrupt utf-8",
      })),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.constantFrom("gzip", "deflate", "br", "zstd", "compress", "gzip, gzip", "identity", "GZIP"),
          fc.constantFrom("valid", "truncated", "garbage", "plain"),
          fc.nat(),
        )
        .map<Encoded>(([encoding, how, cut]) => {
          const compress = compressors[encoding as keyof typeof compressors];
          const packed = compress ? compress(json) : json;
          const body =
            how === "valid"
              ? packed
              : how === "truncated"
                ? packed.subarray(0, Math.max(1, cut % Math.max(packed.length, 1)))
                : how === "garbage"
                  ? Buffer.concat([packed.subarray(0, 4), Buffer.from("not compressed at all")])
                  : json;
          return {
            headers: [
              ["Content-Type", "application/json"],
              ["Content-Encoding", encoding],
            ],
            body,
            intact: false,
            label: `content-encoding ${encoding} (${how})`,
          };
        }),
    },
  );
}

/** Applies one mutation at `path` of a deep copy of `value`. */
function mutate(value: unknown, path: Path, how: string, hostile: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  if (path.length === 0) return how === "delete" ? undefined : hostile;
  let parent: Record<string | number, unknown> = copy;
  for (const step of path.slice(0, -1)) {
    const next = parent[step];
    if (next === null || typeof next !== "object") return copy;
    parent = next as Record<string | number, unknown>;
  }
  const last = path.at(-1)!;
  switch (how) {
    case "delete":
      if (Array.isArray(parent) && typeof last === "number") parent.splice(last, 1);
      else delete parent[last];
      break;
    case "null":
      parent[last] = null;
      break;
    case "wrap":
      parent[last] = [parent[last]];
      break;
    case "stringify":
      parent[last] = JSON.stringify(parent[last] ?? null);
      break;
    case "unknown-field":
      parent[`x_fuzz_${String(last)}`] = hostile;
      break;
    default:
      parent[last] = hostile;
  }
  return copy;
}

/** Valid values of a schema, and the same with one field broken (wrong type, null, missing, nested, huge). */
function validAndMutated(
  schema: JsonSchema,
  valid: fc.Arbitrary<unknown>,
  definitions: Record<string, JsonSchema> = {},
) {
  const paths = [[], ...schemaPaths(schema, definitions)];
  const mutated = fc
    .tuple(
      valid,
      fc.constantFrom(...paths),
      fc.constantFrom("replace", "replace", "delete", "null", "wrap", "stringify", "unknown-field"),
      hostileValue,
    )
    .map(([value, path, how, hostile]) => ({
      value: mutate(value, path, how, hostile),
      label: `${path.join(".") || "(body)"} ← ${how}`,
    }));
  return { valid, mutated };
}

function parsedOrRaw(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return new RawJson(text);
  }
}

const WHOLE_BODY_TEXTS = [
  "",
  "{",
  "}",
  "[]",
  "null",
  "true",
  "1",
  '"text"',
  "{}",
  "[{}]",
  '{"model":',
  "\u0000",
  "{'model':'x'}",
  '{"a":1,}',
  "NaN",
  // Issue 23 item 9: numbers JSON.parse turns into ±Infinity.
  '{"model":"llama-3.2-3b-instruct","messages":[{"role":"user","content":"hi"}],"temperature":1e309}',
  '{"model":"llama-3.2-3b-instruct","messages":[{"role":"user","content":"hi"}],"max_tokens":-1e400}',
  '{"model":"llama-3.2-3b-instruct","messages":[{"role":"user","content":"hi"}],"top_p":123e999,"seed":1}',
];

function chatCase(sources: GeneratorSources): fc.Arbitrary<FuzzCase> {
  const content = fc.oneof(fc.string({ unit: "grapheme", maxLength: 120 }), fc.lorem({ maxCount: 12 }));
  const valid = arbitraryOf(sources.chatBody, {
    maxItems: 3,
    override: (path) => {
      const at = path.join(".");
      if (at === "model") return fc.constantFrom(...sources.models);
      if (at === "messages.0.content") return content;
      if (at === "max_tokens" || at === "max_completion_tokens")
        return fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constant(null));
      return undefined;
    },
  });
  const { mutated } = validAndMutated(sources.chatBody, valid);
  const modelVariant = fc
    .tuple(
      valid,
      fc.constantFrom(...sources.models),
      fc.oneof(
        fc.constantFrom("\u0000", " ", "\n", "\t", "/", ".", "\u200b", "%00", "\ufeff").chain((extra) =>
          fc.constantFrom(
            (m: string) => `${m}${extra}`,
            (m: string) => `${extra}${m}`,
          ),
        ),
        fc.constantFrom(
          (m: string) => m.toUpperCase(),
          (m: string) => m.slice(0, -1),
          (m: string) => `${m}${m}`,
        ),
        fc.integer({ min: 300, max: 30_000 }).map((size) => () => "m".repeat(size)),
        hostileString.map((text) => () => text),
      ),
    )
    .map(([body, model, change]) => ({
      value: { ...(body as object), model: change(model) },
      label: "model ← variant",
    }));
  const heavy = fc
    .tuple(fc.constantFrom(...sources.models), fc.oneof(hostileString, runOf(["字", "😀", "字😀"])), fc.boolean())
    .map(([model, text, stream]) => ({
      value: { model, stream, messages: [{ role: "user", content: text }] },
      label: "content ← heavy text",
    }));
  // `null` for optional fields (every one the gateway's schema leaves optional, nested ones too) means "absent":
  // the document must say so and the request must be served like one without them (issue 11 item 5).
  const optional = optionalPaths(sources.chatBody);
  const nulled = fc.tuple(valid, fc.subarray(optional, { minLength: 1 })).map(([value, paths]) => ({
    value: withNulls(value, paths),
    label: `optional ← null (${paths.map((path) => path.join(".")).join(", ")})`,
  }));
  const bodies = fc.oneof(
    { weight: 3, arbitrary: valid.map((value) => ({ value, label: "valid" })) },
    { weight: 2, arbitrary: nulled },
    { weight: 4, arbitrary: mutated },
    { weight: 2, arbitrary: modelVariant },
    { weight: 2, arbitrary: heavy },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 30_000 }).map((depth) => ({ value: nested(depth), label: "nested body" })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...sources.models), fc.integer({ min: 900_000, max: 1_300_000 }))
        .map(([model, size]) => ({
          value: { model, messages: [{ role: "user", content: "word ".repeat(size / 5) }] },
          label: "big body",
        })),
    },
  );
  const wholeText = fc
    .constantFrom(...WHOLE_BODY_TEXTS)
    .map((text) => ({ text, label: `body ${JSON.stringify(text)}` }));
  const duplicateKeys = fc.constantFrom(...sources.models).map((model) => ({
    text: `{"model":"nope","model":${JSON.stringify(model)},"messages":[{"role":"user","content":"hi"}],"messages":[]}`,
    label: "duplicate keys",
  }));
  return fc
    .tuple(
      fc.oneof(
        {
          weight: 12,
          arbitrary: bodies.map((body) => {
            const text = jsonText(body.value);
            // The oracles judge what was sent (the text), not the value it was written from.
            return { text, value: parsedOrRaw(text), label: body.label };
          }),
        },
        { weight: 1, arbitrary: wholeText.map((body) => ({ ...body, value: new RawJson(body.text) as unknown })) },
        { weight: 1, arbitrary: duplicateKeys.map((body) => ({ ...body, value: new RawJson(body.text) as unknown })) },
      ),
      auth,
      noise,
      fc.option(
        fc.uuid().map((id): [string, string] => ["Idempotency-Key", id]),
        { freq: 6 },
      ),
    )
    .chain(([body, who, extra, idempotency]) =>
      encodeBody(body.text).map<FuzzCase>((encoded) => ({
        method: "POST",
        target: "/v1/chat/completions",
        headers: [...who.headers, ...encoded.headers, ...extra, ...(idempotency ? [idempotency] : [])],
        body: encoded.body,
        key: who.key,
        intent: {
          kind: "chat",
          jsonBody: body.value,
          bytesIntact: encoded.intact && !extra.some(([name]) => name.toLowerCase() === "content-type"),
          key: who.key ?? "other",
        },
        label: `chat/${body.label}; ${encoded.label}; ${who.label}`,
      })),
    );
}

const BAD_SEGMENTS = [
  "%ZZ",
  "%",
  "%G1",
  "%C0%80",
  "%FF",
  "%ED%A0%80",
  "%%",
  "%00",
  "%2F",
  "%2e%2e",
  "..",
  "%20",
  "%0A",
  "%E2%80%8B",
];

function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Percent-encodes the UTF-8 bytes of `text` (lone surrogates included, as U+FFFD, where encodeURIComponent throws). */
function encodeSegment(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function modelsCase(sources: GeneratorSources): fc.Arbitrary<FuzzCase> {
  const segment = fc
    .oneof(
      fc.constantFrom(...sources.models).map(encodeSegment),
      fc
        .tuple(fc.constantFrom(...sources.models), fc.constantFrom(...BAD_SEGMENTS), fc.boolean())
        .map(([model, bad, before]) => (before ? `${bad}${model}` : `${encodeSegment(model)}${bad}`)),
      fc.constantFrom(...sources.models).map((model) => encodeSegment(model.toUpperCase())),
      fc.constantFrom(...BAD_SEGMENTS),
      fc.integer({ min: 200, max: 20_000 }).map((size) => "m".repeat(size)),
      hostileString.filter((text) => text.length < 3_000).map(encodeSegment),
    )
    .filter((segment) => segment.length > 0);
  return fc
    .tuple(
      fc.oneof(
        segment.map((value) => value as string | null),
        fc.constant(null),
      ),
      fc.constantFrom("GET", "GET", "GET", "HEAD"),
      auth,
      noise,
      fc.constantFrom("", "?", "?limit=1", "?x[]=1&x=2", "?%ZZ"),
    )
    .map(([seg, method, who, extra, query]) => ({
      method,
      target: seg === null ? `/v1/models${query}` : `/v1/models/${seg}${query}`,
      headers: [...who.headers, ...extra],
      key: who.key,
      intent:
        seg === null
          ? { kind: "none" }
          : ({ kind: "model-lookup", id: safeDecode(seg), withQuery: query.length > 1 } satisfies Intent),
      label: `models/${seg === null ? "list" : "one"}; ${who.label}`,
    }));
}

function jobsListCase(sources: GeneratorSources): fc.Arbitrary<FuzzCase> {
  const parameters =
    sources.openapi.paths["/v1/jobs"]?.get?.parameters?.filter((parameter) => parameter.in === "query") ?? [];
  const hostileRaw = fc.constantFrom(
    "0x5",
    "1e1",
    "5.0",
    "+5",
    " 5",
    "5 ",
    "-1",
    "0",
    "101",
    "",
    "%ZZ",
    "5%00",
    "%EF%BC%95",
    "1_0",
    "Infinity",
    "NaN",
    "true",
    "failed,settled",
    "%E5%AD%97",
  );
  const entry = fc.constantFrom(...parameters).chain((parameter) => {
    const valid = arbitraryOf(parameter.schema, {
      override: (path, schema) =>
        (parameter.name === "before" || parameter.name === "after") && path.length === 0
          ? fc.oneof(
              fc.nat({ max: 40 }).map((index) => `{{job:${index}}}`),
              arbitraryOf({ ...schema }, {}, ["cursor"]),
            )
          : undefined,
    }).map((value) => (String(value).startsWith("{{") ? String(value) : encodeSegment(String(value))));
    return fc.oneof(
      {
        weight: 4,
        arbitrary: valid.map((raw) => [
          { name: parameter.name, raw, bracketed: false, text: `${parameter.name}=${raw}` },
        ]),
      },
      {
        weight: 2,
        arbitrary: hostileRaw.map((raw) => [
          { name: parameter.name, raw, bracketed: false, text: `${parameter.name}=${raw}` },
        ]),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(valid, fc.constantFrom("[]", "[0]", "[a]", "%5B%5D"))
          .map(([raw, bracket]) => [
            { name: parameter.name, raw, bracketed: true, text: `${parameter.name}${bracket}=${raw}` },
          ]),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(valid, valid).map(([a, b]) => [
          { name: parameter.name, raw: a, bracketed: false, text: `${parameter.name}=${a}` },
          { name: parameter.name, raw: b, bracketed: false, text: `${parameter.name}=${b}` },
        ]),
      },
    );
  });
  const unknown = fc.constantFrom(
    "foo=bar",
    "__proto__[x]=1",
    "constructor[prototype][x]=1",
    "a=%ZZ",
    "&&",
    "=",
    "limit",
  );
  return fc
    .tuple(fc.array(entry, { maxLength: 4 }), fc.option(unknown, { freq: 5 }), auth, noise)
    .map(([entries, extraParam, who, extra]) => {
      const flat = entries.flat();
      const texts = [...flat.map((item) => item.text), ...(extraParam ? [extraParam] : [])];
      // `limit` alone (no "=") is a documented parameter with an empty value.
      const params = [
        ...flat.map(({ name, raw, bracketed }) => ({ name, raw, bracketed })),
        ...(extraParam === "limit" ? [{ name: "limit", raw: "", bracketed: false }] : []),
      ];
      return {
        method: "GET",
        target: `/v1/jobs${texts.length > 0 ? `?${texts.join("&")}` : ""}`,
        headers: [...who.headers, ...extra],
        key: who.key,
        intent: {
          kind: "jobs-query",
          params,
          ...(extraParam && extraParam !== "limit" ? { unlisted: extraParam.split("=")[0]!.replace(/&/g, "") } : {}),
        },
        label: `jobs/list; ${who.label}`,
      } satisfies FuzzCase;
    });
}

function jobSegment(): fc.Arbitrary<{ segment: string; own: boolean }> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.nat({ max: 40 }).map((index) => ({ segment: `{{job:${index}}}`, own: true })) },
    { weight: 2, arbitrary: fc.constant({ segment: "{{job:last}}", own: true }) },
    {
      weight: 1,
      arbitrary: fc.stringMatching(JOB_ID_PATTERN).map((segment) => ({ segment, own: false })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.nat({ max: 40 }), fc.constantFrom(...BAD_SEGMENTS))
        .map(([index, bad]) => ({ segment: `{{job:${index}}}${bad}`, own: false })),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...BAD_SEGMENTS, "job_", "JOB_01ARZ3NDEKTSV4RRFFQ69G5FAV", "j".repeat(5000))
        .map((segment) => ({ segment, own: false })),
    },
  );
}

function jobCase(): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(jobSegment(), auth, noise, fc.constantFrom("GET", "GET", "HEAD"))
    .map(([{ segment, own }, who, extra, method]) => ({
      method,
      target: `/v1/jobs/${segment}`,
      headers: [...who.headers, ...extra],
      key: who.key,
      intent: own && who.key === "funded" ? { kind: "own-job" } : { kind: "none" },
      label: `jobs/one; ${who.label}`,
    }));
}

function disputeCase(sources: GeneratorSources): fc.Arbitrary<FuzzCase> {
  const schema =
    sources.openapi.paths["/v1/jobs/{job_id}/dispute"]?.post?.requestBody?.content["application/json"]?.schema ?? {};
  const definitions = sources.openapi.components.schemas;
  const valid = arbitraryOf(schema, { definitions });
  const { mutated } = validAndMutated(resolve(schema, definitions), valid, definitions);
  const body = fc.oneof(
    { weight: 2, arbitrary: valid.map((value) => ({ value, label: "valid" })) },
    { weight: 3, arbitrary: mutated },
  );
  return fc.tuple(jobSegment(), body, auth, noise).chain(([{ segment }, { value, label }, who, extra]) =>
    encodeBody(jsonText(value)).map<FuzzCase>((encoded) => ({
      method: "POST",
      target: `/v1/jobs/${segment}/dispute`,
      headers: [...who.headers, ...encoded.headers, ...extra],
      body: encoded.body,
      key: who.key,
      intent: { kind: "none" },
      label: `dispute/${label}; ${encoded.label}; ${who.label}`,
    })),
  );
}

function accountCase(): fc.Arbitrary<FuzzCase> {
  return fc.tuple(auth, noise, fc.constantFrom("", "?wallet=0x0", "?x[]=1")).map(([who, extra, query]) => ({
    method: "GET",
    target: `/v1/account${query}`,
    headers: [...who.headers, ...extra],
    key: who.key,
    intent: { kind: "none" },
    label: `account; ${who.label}`,
  }));
}

/** A random address inside one of ipaddr.js's special-purpose ranges (IANA registries), IPv4 or IPv6. */
export const specialAddress: fc.Arbitrary<string> = (() => {
  const ranges: [string, number][] = [];
  for (const family of [ipaddr.IPv4, ipaddr.IPv6]) {
    const table = (family.prototype as unknown as { SpecialRanges: unknown }).SpecialRanges as Record<
      string,
      [ipaddr.IPv4 | ipaddr.IPv6, number] | [ipaddr.IPv4 | ipaddr.IPv6, number][]
    >;
    for (const entry of Object.values(table)) {
      const list = (Array.isArray(entry[0]) ? entry : [entry]) as [ipaddr.IPv4 | ipaddr.IPv6, number][];
      for (const [address, prefix] of list) ranges.push([address.toString(), prefix]);
    }
  }
  const inRange = fc
    .tuple(fc.constantFrom(...ranges), fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 16, maxLength: 16 }))
    .map(([[base, prefix], random]) => {
      const bytes = ipaddr.parse(base).toByteArray();
      const out = bytes.map((byte, index) => {
        const keep = Math.max(0, Math.min(8, prefix - index * 8));
        const mask = keep === 0 ? 0 : (0xff << (8 - keep)) & 0xff;
        return (byte & mask) | (random[index]! & ~mask & 0xff);
      });
      return ipaddr.fromByteArray(out).toString();
    });
  // Special IPv4 hosts written in the IPv6 forms that reach them (mapped, translated, NAT64, 6to4).
  const v4 = inRange.filter((address) => ipaddr.parse(address).kind() === "ipv4");
  const embedded = fc
    .tuple(v4, fc.constantFrom("mapped", "translated", "nat64", "6to4", "compatible"))
    .map(([address, form]) => {
      const [a, b, c, d] = ipaddr.IPv4.parse(address).octets;
      const high = ((a! << 8) | b!).toString(16);
      const low = ((c! << 8) | d!).toString(16);
      return {
        mapped: `::ffff:${address}`,
        translated: `::ffff:0:${high}:${low}`,
        nat64: `64:ff9b::${high}:${low}`,
        "6to4": `2002:${high}:${low}::1`,
        compatible: `::${address}`,
      }[form];
    });
  return fc.oneof(inRange, embedded).filter((address) => ipaddr.process(address).range() !== "unicast");
})();

function webhookUrl(): fc.Arbitrary<{ url: string; host?: string; label: string }> {
  // Only names under `.invalid` (RFC 6761) or special addresses: a webhook the gateway accepts never reaches a real host.
  const label = fc.stringMatching(/^[a-z0-9]{1,20}$/);
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(label, fc.webPath())
        .map(([name, path]) => ({ url: `https://${name}.invalid${path}`, label: "https .invalid" })),
    },
    {
      weight: 4,
      arbitrary: fc.tuple(specialAddress, fc.webPath()).map(([address, path]) => {
        const host = ipaddr.parse(address).kind() === "ipv6" ? `[${address}]` : address;
        return { url: `https://${host}${path || "/hook"}`, host: address, label: "special address" };
      }),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          "http://hook.invalid/",
          "ftp://hook.invalid/",
          "javascript:alert(1)",
          "//hook.invalid/x",
          "https://",
          "https://user:pw@hook.invalid/",
          "https://hook.invalid/#frag",
          "https://localhost/hook",
          "https://intranet/hook",
          "https://2130706433/hook",
          "https://0x7f.1/hook",
          "https://hook.invalid:99999/",
          "https://%ZZ.invalid/",
        )
        .map((url) => ({ url, label: "odd url" })),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 2_000, max: 100_000 })
        .map((size) => ({ url: `https://hook.invalid/${"a".repeat(size)}`, label: "long url" })),
    },
    { weight: 1, arbitrary: hostileString.map((url) => ({ url, label: "hostile url" })) },
    {
      // Issue 23 item 9: a space or control character anywhere in an otherwise valid URL.
      weight: 1,
      arbitrary: fc
        .tuple(
          label,
          fc.webPath(),
          fc.constantFrom("\r\n", "\n", "\r", "\t", " ", "\u0000", "\u007f", "\r\nX-Injected: 1"),
        )
        .chain(([name, path, bad]) => {
          const url = `https://${name}.invalid${path || "/hook"}`;
          return fc
            .integer({ min: 0, max: url.length })
            .map((at) => ({ url: url.slice(0, at) + bad + url.slice(at), label: CONTROL_URL_LABEL }));
        }),
    },
  );
}

const CONTROL_URL_LABEL = "control-character url";

function webhooksCase(sources: GeneratorSources): fc.Arbitrary<FuzzCase> {
  const webhookOptional = optionalPaths(sources.webhookBody);
  const valid = fc
    .tuple(arbitraryOf(sources.webhookBody, {}), webhookUrl(), fc.subarray(webhookOptional))
    .map(([value, url, nulls]) => ({ value: withNulls({ ...(value as object), url: url.url }, nulls), url }));
  const { mutated } = validAndMutated(
    sources.webhookBody,
    valid.map(({ value }) => value as unknown),
  );
  const create = fc
    .tuple(
      fc.oneof(
        {
          weight: 3,
          arbitrary: valid.map(({ value, url }) => ({ value: value as unknown, url, label: `valid ${url.label}` })),
        },
        { weight: 2, arbitrary: mutated.map((item) => ({ ...item, url: undefined })) },
      ),
      auth,
      noise,
    )
    .chain(([{ value, url, label }, who, extra]) =>
      encodeBody(jsonText(value)).map<FuzzCase>((encoded) => {
        // The host as the gateway will parse it (URL normalises 2130706433, 0x7f.1, upper case…).
        // The host as the gateway will parse it (URL normalises 2130706433, 0x7f.1, upper case…); only for bodies
        // that are otherwise valid, so the URL is what a refusal is about.
        let host: string | undefined;
        try {
          host = url === undefined ? undefined : (url.host ?? new URL(url.url).hostname.replace(/^\[|\]$/g, ""));
        } catch {
          host = undefined;
        }
        const isIp = host !== undefined && ipaddr.isValid(host);
        return {
          method: "POST",
          target: "/v1/webhooks",
          headers: [...who.headers, ...encoded.headers, ...extra],
          body: encoded.body,
          key: who.key,
          intent:
            url?.label === CONTROL_URL_LABEL && encoded.intact
              ? { kind: "webhook-control-url", url: url.url }
              : isIp && encoded.intact
                ? { kind: "webhook-ip", host: host! }
                : url?.label === "https .invalid" && encoded.intact
                  ? { kind: "webhook-create", jsonBody: value }
                  : { kind: "none" },
          label: `webhooks/create ${label}; ${encoded.label}; ${who.label}`,
        };
      }),
    );
  const list = fc
    .tuple(auth, noise, fc.constantFrom("", "?limit=2", "?limit=0x5", "?after=wh_x"))
    .map<FuzzCase>(([who, extra, query]) => ({
      method: "GET",
      target: `/v1/webhooks${query}`,
      headers: [...who.headers, ...extra],
      key: who.key,
      intent: { kind: "webhook-list" },
      label: `webhooks/list; ${who.label}`,
    }));
  const remove = fc
    .tuple(
      fc.oneof(
        fc.nat({ max: 200 }).map((index) => `{{webhook:${index}}}`),
        fc.stringMatching(/^wh_[0-9A-HJKMNP-TV-Z]{26}$/),
        fc.constantFrom(...BAD_SEGMENTS),
        fc.nat({ max: 200 }).map((index) => `{{webhook:${index}}}%00`),
      ),
      auth,
      noise,
    )
    .map<FuzzCase>(([segment, who, extra]) => ({
      method: "DELETE",
      target: `/v1/webhooks/${segment}`,
      headers: [...who.headers, ...extra],
      key: who.key,
      intent: { kind: "none" },
      label: `webhooks/delete; ${who.label}`,
    }));
  return fc.oneof({ weight: 4, arbitrary: create }, { weight: 2, arbitrary: list }, { weight: 3, arbitrary: remove });
}

/** Every documented path with each method it does not document, unknown paths under /v<n>/, and the probes. */
function pathsAndMethodsCase(sources: GeneratorSources): fc.Arbitrary<FuzzCase> {
  const filled = Object.keys(sources.openapi.paths).map((template) =>
    template
      .replace("{model_id}", encodeSegment(sources.models[0] ?? "m"))
      .replace("{job_id}", "{{job:0}}")
      .replace("{webhook_id}", "{{webhook:0}}"),
  );
  const wrongMethod = fc
    .tuple(
      fc.constantFrom(...filled),
      fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"),
      auth,
    )
    .map<FuzzCase>(([target, method, who]) => ({
      method,
      target,
      headers: [
        ...who.headers,
        ...(method === "GET" || method === "HEAD" ? [] : ([["Content-Type", "application/json"]] as Headers)),
      ],
      ...(method === "GET" || method === "HEAD" ? {} : { body: Buffer.from("{}") }),
      key: who.key,
      intent: { kind: "none" },
      label: `methods ${method}; ${who.label}`,
    }));
  const unknown = fc
    .oneof(
      fc.constantFrom(
        "/v2/models",
        "/v0/jobs",
        "/v1/nope",
        "/v1/models/a/b",
        "/v1/jobs/x/y/z",
        "/V1/models",
        "/v1//models",
        "/v1/./models",
        "/v1/%2e%2e/models",
        "/v10/chat/completions",
        "/v1/chat/completions/",
        "/v1",
        "/v2",
        "/v1/webhooks/x/y",
        "/v1/account/",
        "/v1/%ZZ",
        "/v3/%00",
      ),
      fc
        .tuple(fc.integer({ min: 0, max: 99 }), fc.stringMatching(/^[a-z]{1,12}$/))
        .map(([version, name]) => `/v${version}/${name}`),
      fc.constantFrom(
        "/healthz",
        "/readyz",
        "/v1/openapi.json",
        "/",
        "/favicon.ico",
        "/settings",
        "/%ZZ",
        "/..%2f..%2fetc/passwd",
      ),
    )
    .chain((target) =>
      fc.tuple(fc.constantFrom("GET", "GET", "POST", "DELETE"), auth).map<FuzzCase>(([method, who]) => ({
        method,
        target,
        headers: [...who.headers, ["Accept", "text/html,application/json;q=0.9,*/*;q=0.8"]],
        key: who.key,
        intent: { kind: "none" },
        label: `paths ${target}; ${who.label}`,
      })),
    );
  return fc.oneof(wrongMethod, unknown);
}

/** Requests an HTTP parser must refuse (or survive): broken request lines, framing, header bytes and sizes. */
function protocolCase(): fc.Arbitrary<FuzzCase> {
  const host = "Host: 127.0.0.1\r\nAuthorization: Bearer {{key:funded}}\r\n";
  const heads = fc.oneof(
    fc.constantFrom(
      `GET /v1/models HTTP/1.1\r\n${host}X-Bad: a\u0001b\r\nConnection: close\r\n\r\n`,
      `GET /v1/models HTTP/1.1\r\n${host}X-Bad: a\u0000b\r\nConnection: close\r\n\r\n`,
      `GET /v1/models HTTP/1.1\r\n${host}Bad Name: x\r\nConnection: close\r\n\r\n`,
      `GET /v1/models HTTP/1.1\r\n${host}: empty-name\r\nConnection: close\r\n\r\n`,
      `GET /v1/models HTTP/1.1 extra\r\n${host}Connection: close\r\n\r\n`,
      `GET  /v1/models HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
      `GET /v1/models HTTP/9.9\r\n${host}Connection: close\r\n\r\n`,
      `get /v1/models HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
      `FOO /v1/models HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
      `GET /v1/models\r\n${host}Connection: close\r\n\r\n`,
      `GET /v1/mo dels HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
      `POST /v1/chat/completions HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: abc\r\nConnection: close\r\n\r\n{}`,
      `POST /v1/chat/completions HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: -1\r\nConnection: close\r\n\r\n{}`,
      `POST /v1/chat/completions HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{} `,
      `POST /v1/chat/completions HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      `POST /v1/chat/completions HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      `POST /v1/chat/completions HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      `GET /v1/models HTTP/1.1\r\n${host}X-Folded: a\r\n  b\r\nConnection: close\r\n\r\n`,
      `GET /v1/models HTTP/1.1\n${host.replaceAll("\r\n", "\n")}Connection: close\n\n`,
      `GET http://evil.invalid/v1/models HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
      `GET * HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
      `CONNECT 127.0.0.1:1 HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
      // Issue 23 item 6: Host missing, repeated or empty (RFC 9112 §3.2: 400), answered in the spec's format.
      `GET /v1/models HTTP/1.1\r\nAuthorization: Bearer {{key:funded}}\r\nConnection: close\r\n\r\n`,
      `GET /v1/models HTTP/1.1\r\n${host}Host: evil.invalid\r\nConnection: close\r\n\r\n`,
      `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      `POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer {{key:funded}}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    ),
    fc
      .integer({ min: 16_000, max: 80_000 })
      .map((size) => `GET /v1/models HTTP/1.1\r\n${host}X-Big: ${"b".repeat(size)}\r\nConnection: close\r\n\r\n`),
    fc
      .integer({ min: 9_000, max: 80_000 })
      .map((size) => `GET /v1/models/${"m".repeat(size)} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`),
    fc
      .string({
        unit: fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)),
        minLength: 1,
        maxLength: 40,
      })
      .map((bytes) => `GET /v1/models/${bytes} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`),
  );
  return heads.map<FuzzCase>((head) => {
    const [method = "GET", target = "/"] = head.split(/\r?\n/)[0]!.split(" ");
    return {
      method,
      target,
      headers: [],
      rawHead: Buffer.from(head, "latin1"),
      key: undefined,
      intent: { kind: "none" },
      label: "protocol",
    };
  });
}

/** The properties (each the requests of one part of the API) and their share of a run's requests. */
export const PROPERTY_SHARES = {
  "chat completions": 0.3,
  models: 0.08,
  "jobs list": 0.12,
  "one job": 0.07,
  disputes: 0.08,
  account: 0.04,
  webhooks: 0.14,
  "paths and methods": 0.1,
  protocol: 0.07,
} as const;

export type PropertyName = keyof typeof PROPERTY_SHARES;

export function propertyArbitraries(sources: GeneratorSources): Record<PropertyName, fc.Arbitrary<FuzzCase>> {
  return {
    "chat completions": chatCase(sources),
    models: modelsCase(sources),
    "jobs list": jobsListCase(sources),
    "one job": jobCase(),
    disputes: disputeCase(sources),
    account: accountCase(),
    webhooks: webhooksCase(sources),
    "paths and methods": pathsAndMethodsCase(sources),
    protocol: protocolCase(),
  };
}

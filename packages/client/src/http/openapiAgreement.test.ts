import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { readCommittedOpenapi } from "../../../../api/openapi/openapiFile.js";
import { EVENT_NAMES } from "./eventNames.js";
import {
  chatCompletionRequestSchema,
  createWebhookBody,
  disputeRequestSchema,
  listJobsQuerySchema,
  listWebhooksQuery,
  errorBodySchema,
  jobSchema,
} from "./index.js";
import { errorCatalog } from "./errorCatalog.js";
import { JOB_STATES } from "../statuses.js";
import { TIERS } from "../tiers.js";

/**
 * The committed OpenAPI document and the zod schemas the gateway validates with say the same thing: a request is
 * accepted by the schema exactly when it is valid against the document. Checked on random requests built from
 * boundary values, valid values and junk, field by field.
 *
 * Two documented limits of the comparison: `format` is an annotation in JSON Schema 2020-12 (the gateway judges a
 * webhook URL by its own policy, api/webhooks/targetPolicy.ts), so formats are not asserted; and zod counts a
 * string's length in UTF-16 units where JSON Schema counts code points, so the length-bounded free-text fields
 * (`name`, `user`) are drawn from the Basic Multilingual Plane, where both count the same (api/README.md).
 */

type Json = Record<string, unknown>;
const document = JSON.parse(readCommittedOpenapi()) as {
  components: { schemas: Json };
  paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: Json }[] }>>;
};

/** `#/components/schemas/X` → `openapi.json#/$defs/X`, so Ajv resolves every reference inside one schema. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === "$ref" && typeof inner === "string"
        ? inner.replace("#/components/schemas/", "openapi.json#/$defs/")
        : rewriteRefs(inner),
    ]),
  );
}

const ajv = new Ajv2020({ strict: false, validateFormats: false });
ajv.addSchema({ $id: "openapi.json", $defs: rewriteRefs(document.components.schemas) });
const component = (name: string): ValidateFunction => ajv.compile({ $ref: `openapi.json#/$defs/${name}` });
const queryParameter = (path: string, name: string): ValidateFunction => {
  const parameter = document.paths[path]!.get!.parameters!.find((candidate) => candidate.name === name);
  return ajv.compile(parameter!.schema);
};

/** Values of no particular shape: what a careless client sends. */
const junk = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string(),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string(), { maxLength: 3 }),
);
const bmpText = (maxLength: number) =>
  fc.string({ unit: "binary", maxLength }).filter((s) => !/[\uD800-\uDFFF]/.test(s));
const around = (...points: number[]) =>
  fc.constantFrom(...points.flatMap((point) => [point - 1, point - 0.5, point, point + 0.5, point + 1]));
const hex64 = fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF"), minLength: 63, maxLength: 65 });
const ulid = fc.string({
  unit: fc.constantFrom(..."0123456789ABCDEFGHJKMNPQRSTVWXYZIL"),
  minLength: 25,
  maxLength: 27,
});

/** A field's values: valid ones (most draws) and wrong ones (boundaries just outside, other types, junk). */
interface Field {
  valid: fc.Arbitrary<unknown>;
  invalid?: fc.Arbitrary<unknown>;
}

/**
 * Bodies holding a random subset of `fields` (the `required` ones in most draws), each value mostly valid, so that a
 * body is often entirely valid and otherwise wrong in one or two places: the cases that tell validators apart.
 */
function bodyOf(fields: Record<string, Field>, required: string[] = []) {
  const values = Object.fromEntries(
    Object.entries(fields).map(([name, { valid, invalid }]) => [
      name,
      fc.oneof(
        { weight: 30, arbitrary: valid },
        { weight: 1, arbitrary: invalid ?? junk },
        { weight: 1, arbitrary: junk },
      ),
    ]),
  );
  return fc.oneof(
    { weight: 30, arbitrary: fc.record(values, { requiredKeys: required }) },
    { weight: 2, arbitrary: fc.record(values, { requiredKeys: [] }) },
    { weight: 1, arbitrary: junk },
  );
}

function expectAgreement(schema: z.ZodType, validate: ValidateFunction, arbitrary: fc.Arbitrary<unknown>): void {
  let accepted = 0;
  fc.assert(
    fc.property(arbitrary, (value) => {
      const byZod = schema.safeParse(value).success;
      if (byZod) accepted += 1;
      expect({ value, byDocument: validate(value) }).toEqual({ value, byDocument: byZod });
    }),
    { numRuns: 3000 },
  );
  // The property says nothing if every sample is refused: a share of them must be valid requests.
  expect(accepted).toBeGreaterThan(100);
}

const message = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record(
      {
        role: fc.constantFrom("system", "user", "assistant"),
        content: fc.string({ maxLength: 20 }),
        name: fc.oneof(fc.constant(null), bmpText(10), bmpText(300)),
      },
      { requiredKeys: ["role", "content"] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      { role: fc.oneof(fc.constantFrom("tool", "", "User"), junk), content: junk, name: fc.integer() },
      { requiredKeys: [] },
    ),
  },
);
const lowerHex64 = fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 });
const nullable = (arbitrary: fc.Arbitrary<unknown>) => fc.oneof(fc.constant(null), arbitrary);
/** A number field bounded by [min, max]: values inside, and just outside. */
const bounded = (min: number, max: number, integer: boolean): Field => ({
  valid: nullable(integer ? fc.integer({ min, max: Math.min(max, 2 ** 31) }) : fc.double({ min, max, noNaN: true })),
  invalid: fc.oneof(around(min, max), fc.constant(String(min))),
});

describe("the OpenAPI document agrees with the contract's zod schemas", () => {
  it("accepts exactly the chat completion bodies ChatCompletionRequest's zod schema accepts", () => {
    expectAgreement(
      chatCompletionRequestSchema,
      component("ChatCompletionRequest"),
      bodyOf(
        {
          model: { valid: fc.string({ minLength: 1, maxLength: 8 }), invalid: fc.constant("") },
          messages: {
            valid: fc.array(message, { minLength: 1, maxLength: 3 }),
            invalid: fc.oneof(fc.constant([]), fc.array(junk, { maxLength: 2 })),
          },
          stream: { valid: nullable(fc.boolean()) },
          stream_options: {
            valid: nullable(fc.record({ include_usage: nullable(fc.boolean()) }, { requiredKeys: [] })),
            invalid: fc.record({ include_usage: junk }),
          },
          max_tokens: bounded(1, 4_294_967_295, true),
          max_completion_tokens: bounded(1, 4_294_967_295, true),
          temperature: bounded(0, 2, false),
          top_p: bounded(0, 1, false),
          frequency_penalty: bounded(-2, 2, false),
          presence_penalty: bounded(-2, 2, false),
          stop: {
            valid: nullable(
              fc.oneof(
                fc.string({ minLength: 1, maxLength: 4 }),
                fc.array(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 4 }),
              ),
            ),
            invalid: fc.oneof(fc.constant(""), fc.array(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 6 })),
          },
          seed: {
            valid: nullable(fc.integer()),
            invalid: fc.oneof(
              around(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
              fc.double({ noNaN: true, noDefaultInfinity: true }),
            ),
          },
          user: { valid: nullable(bmpText(600)) },
          n: { valid: nullable(fc.constant(1)), invalid: fc.constantFrom(0, 2, 1.5, true) },
          logprobs: { valid: nullable(fc.constant(false)), invalid: fc.constant(true) },
          response_format: {
            valid: nullable(fc.constant({ type: "text" })),
            invalid: fc.record({ type: fc.constantFrom("json_object", "", 1) }),
          },
        },
        ["model", "messages"],
      ),
    );
  });

  it("accepts exactly the dispute bodies DisputeRequest's zod schema accepts", () => {
    expectAgreement(
      disputeRequestSchema,
      component("DisputeRequest"),
      bodyOf(
        {
          received_output_hash: {
            valid: lowerHex64.map((hex) => `sha256:${hex}`),
            invalid: fc.oneof(
              hex64.map((hex) => `sha256:${hex}`),
              lowerHex64.map((hex) => `0x${hex}`),
              fc.string(),
            ),
          },
        },
        ["received_output_hash"],
      ),
    );
  });

  it("accepts exactly the webhook registrations WebhookCreateRequest's zod schema accepts", () => {
    expectAgreement(
      createWebhookBody,
      component("WebhookCreateRequest"),
      bodyOf(
        {
          url: { valid: fc.webUrl(), invalid: fc.oneof(fc.constant(""), fc.string()) },
          events: {
            valid: fc.array(fc.constantFrom(...EVENT_NAMES), { minLength: 1, maxLength: 4 }),
            invalid: fc.array(fc.oneof(fc.constantFrom(...EVENT_NAMES), fc.string()), { maxLength: 3 }),
          },
          secret: {
            valid: nullable(fc.string({ unit: fc.constantFrom("a", "Z", "~", "!"), minLength: 16, maxLength: 40 })),
            invalid: fc.oneof(
              fc.string({ unit: fc.constantFrom("a", "Z", "~", "!", " ", "é", "\t"), minLength: 14, maxLength: 18 }),
              fc.string({ unit: fc.constantFrom("a", "Z", "~", "!"), minLength: 250, maxLength: 260 }),
            ),
          },
        },
        ["url", "events"],
      ),
    );
  });

  it("describes the query parameters of GET /v1/jobs and GET /v1/webhooks as parseQuery reads them", () => {
    const cases: [string, z.ZodObject, Record<string, fc.Arbitrary<string>>][] = [
      [
        "/v1/jobs",
        listJobsQuerySchema,
        {
          before: fc.oneof(
            ulid.map((id) => `job_${id}`),
            fc.string(),
          ),
          after: fc.oneof(
            ulid.map((id) => `job_${id}`),
            fc.string(),
          ),
          status: fc.oneof(fc.constantFrom(...JOB_STATES), fc.string()),
          // Every code point, control characters, lone surrogates and characters beyond the BMP included.
          model: fc.oneof(
            fc.string({ unit: "binary", maxLength: 70 }),
            fc.string({ unit: "binary", minLength: 60, maxLength: 70 }),
            fc.string({ unit: "grapheme", maxLength: 40 }),
          ),
        },
      ],
      [
        "/v1/webhooks",
        listWebhooksQuery,
        {
          before: fc.oneof(
            ulid.map((id) => `wh_${id}`),
            fc.string(),
          ),
          after: fc.oneof(
            ulid.map((id) => `wh_${id}`),
            fc.string(),
          ),
          status: fc.oneof(fc.constantFrom("active", "failed"), fc.string()),
        },
      ],
    ];
    for (const [path, query, fields] of cases) {
      for (const [name, arbitrary] of Object.entries(fields)) {
        const validate = queryParameter(path, name);
        const field = query.shape[name] as z.ZodType;
        fc.assert(
          fc.property(arbitrary, (value) => {
            expect({ path, name, value, byDocument: validate(value) }).toEqual({
              path,
              name,
              value,
              byDocument: field.safeParse(value).success,
            });
          }),
          { numRuns: 2000 },
        );
      }
      // `limit` travels as decimal digits; the document states the number they must spell.
      const validateLimit = queryParameter(path, "limit");
      fc.assert(
        fc.property(fc.oneof(fc.nat({ max: 150 }).map(String), fc.constantFrom("0", "1", "100", "101")), (digits) => {
          expect(validateLimit(Number(digits))).toBe(query.shape.limit!.safeParse(digits).success);
        }),
      );
    }
  });

  it("describes a Job resource exactly as the zod schema the job routes answer with", () => {
    const txHash = lowerHex64.map((hex) => `0x${hex}`);
    const time = fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
    const count = fc.nat({ max: 10_000 });
    expectAgreement(
      jobSchema,
      component("Job"),
      bodyOf(
        {
          id: { valid: ulid.filter((id) => id.length === 26 && /^[0-7]/.test(id)).map((id) => `job_${id}`) },
          object: { valid: fc.constant("job"), invalid: fc.constant("jobs") },
          status: { valid: fc.constantFrom(...JOB_STATES), invalid: fc.constant("open") },
          model: { valid: fc.string({ maxLength: 10 }) },
          tier: { valid: fc.constantFrom(...TIERS), invalid: fc.constant("free") },
          credits_charged: { valid: count, invalid: fc.constantFrom(-1, 0.5) },
          usdg_value: { valid: fc.double({ min: 0, max: 100, noNaN: true }), invalid: fc.constant(-0.01) },
          worker_address: {
            valid: fc.oneof(fc.constant(null), fc.constant("0x5FbDB2315678afecb367f032d93F642f64180aa3")),
            invalid: fc.constant("0x5FbDB2315678"),
          },
          created_at: { valid: time },
          completed_at: { valid: fc.oneof(fc.constant(null), time) },
          on_chain: {
            valid: fc.record({
              escrow_tx: txHash,
              settlement_tx: txHash,
              escrow_address: fc.constant("0x5FbDB2315678afecb367f032d93F642f64180aa3"),
              block_number: count,
              proof_hash: lowerHex64.map((hex) => `sha256:${hex}`),
            }),
            invalid: fc.record({ escrow_tx: fc.constant("0xAB"), block_number: fc.constant(-1) }),
          },
          usage: {
            valid: fc.record({ prompt_tokens: count, completion_tokens: count, total_tokens: count }),
            invalid: fc.record({ prompt_tokens: fc.constant(-1) }, { requiredKeys: [] }),
          },
        },
        ["id", "object", "status", "model", "tier", "credits_charged", "usdg_value", "worker_address"].concat([
          "created_at",
          "completed_at",
          "usage",
        ]),
      ),
    );
  });

  it("describes the error body exactly as the zod schema built from the error catalog", () => {
    const codes = Object.keys(errorCatalog);
    const types = [...new Set(Object.values(errorCatalog).map((entry) => entry.type))];
    const error = bodyOf(
      {
        code: { valid: fc.constantFrom(...codes), invalid: fc.constant("teapot") },
        message: { valid: fc.string({ minLength: 1, maxLength: 20 }), invalid: fc.constant("") },
        type: { valid: fc.constantFrom(...types), invalid: fc.constant("oops") },
        param: { valid: fc.oneof(fc.constant(null), fc.string({ maxLength: 8 })) },
        docs: { valid: fc.constant("https://docs.example/errors#invalid_request") },
        details: { valid: fc.dictionary(fc.string({ maxLength: 4 }), junk, { maxKeys: 2 }) },
      },
      ["code", "message", "type", "param", "docs"],
    );
    // The body is closed (`additionalProperties: false`): an unknown field makes it invalid on both sides.
    const withUnknownField = error.map((value) =>
      value !== null && typeof value === "object" && !Array.isArray(value) ? { ...value, extra: 1 } : value,
    );
    expectAgreement(
      errorBodySchema,
      component("Error"),
      bodyOf({ error: { valid: error, invalid: withUnknownField } }, ["error"]),
    );
  });
});

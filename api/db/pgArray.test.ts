import { createRequire } from "node:module";
import path from "node:path";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startPostgres, type RunningPostgres } from "../../scripts/stack/startPostgres.js";
import { pgArray } from "./pgArray.js";

// node-postgres's own encoder, the reference: pgArray must send what it would have sent.
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as { prepareValue(value: unknown): unknown };

const PORT = Number(process.env.PG_ARRAY_TEST_PG_PORT ?? 10093);

const element = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.constantFrom('"', "\\", '\\"', ",", "{", "}", "NULL", "null", " ", "", "a,b", '{"x":1}'),
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.bigInt(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);

describe("pgArray", () => {
  let postgres: RunningPostgres;
  let pool: pg.Pool;

  beforeAll(async () => {
    postgres = await startPostgres({
      stateDir: path.join(repoRoot, ".local", "pg-array-unit"),
      port: PORT,
      externalUrl: null,
    });
    pool = new pg.Pool({ connectionString: postgres.databaseUrl, max: 2 });
  }, 120_000);

  afterAll(async () => {
    await pool?.end();
    await postgres?.stop();
  });

  it("is the literal node-postgres writes for any strings, numbers, bigints, booleans and nulls", () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 30 }), (values) => {
        expect(pgArray(values)).toBe(prepareValue(values));
      }),
      { numRuns: 2_000 },
    );
  });

  it("leaves an array holding anything else to node-postgres, unchanged", () => {
    const values = [new Date(0), "a"];
    expect(pgArray(values)).toBe(values);
    const nested = [["a"], ["b"]];
    expect(pgArray(nested)).toBe(nested);
  });

  it("reads back from PostgreSQL as the same text[], quotes, backslashes, commas and NULLs included", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(fc.string({ unit: "grapheme" }).filter((text) => !text.includes("\u0000"))), {
          maxLength: 20,
        }),
        async (values) => {
          const { rows } = await pool.query<{ a: (string | null)[] }>("SELECT $1::text[] AS a", [pgArray(values)]);
          expect(rows[0]!.a).toEqual(values);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("reads back bigint, integer and boolean arrays as PostgreSQL parses them", async () => {
    const { rows } = await pool.query<{ b: string[]; i: number[]; f: boolean[] }>(
      "SELECT $1::bigint[] AS b, $2::integer[] AS i, $3::boolean[] AS f",
      [pgArray(["9007199254740993", 0n, -5n]), pgArray([1, null, -7]), pgArray([true, false, null])],
    );
    expect(rows[0]).toEqual({ b: ["9007199254740993", "0", "-5"], i: [1, null, -7], f: [true, false, null] });
  });
});

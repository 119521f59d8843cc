import { describe, expect, it } from "vitest";
import { indexTablesOf } from "./indexTables.js";

describe("indexTablesOf", () => {
  it("reads the table names of a live-query notification", () => {
    expect(indexTablesOf('["account","api_key","job"]')).toEqual(["account", "api_key", "job"]);
  });

  it("reads a block that wrote nothing as no tables", () => {
    expect(indexTablesOf("[]")).toEqual([]);
  });

  it("answers undefined (any table may have changed) for a payload that is not a list of names", () => {
    for (const payload of [undefined, "", "not json", "{}", "[1]", '["a", null]'])
      expect(indexTablesOf(payload)).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

// The settings that decide `{docs_url}`, the base every error body's `error.docs` link is built on.

const REQUIRED = {
  DATABASE_URL: "postgres://localhost/db",
  INDEXER_URL: "http://127.0.0.1:42069",
  RPC_URL: "http://127.0.0.1:8545",
  DEPLOYMENTS_FILE: "deployments.json",
  GATEWAY_PRIVATE_KEY: `0x${"1".repeat(64)}`,
  WORKER_GATEWAY_TOKEN: "a-token-of-16-chars",
};

describe("DOCS_URL", () => {
  it("defaults to the docs site the gateway serves: its public root + /docs", () => {
    expect(loadConfig({ ...REQUIRED, API_PORT: "9000" }).DOCS_URL).toBe("http://127.0.0.1:9000/docs");
    expect(loadConfig({ ...REQUIRED, PUBLIC_BASE_URL: "https://api.example.com" }).DOCS_URL).toBe(
      "https://api.example.com/docs",
    );
  });

  it("takes a site hosted elsewhere, without the trailing slash that would double the links' /", () => {
    expect(loadConfig({ ...REQUIRED, DOCS_URL: "https://docs.example.com/" }).DOCS_URL).toBe(
      "https://docs.example.com",
    );
  });

  it("refuses a value that is not an http(s) URL, naming the variable", () => {
    for (const value of ["docs.example.com", "ftp://docs.example.com"]) {
      expect(() => loadConfig({ ...REQUIRED, DOCS_URL: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ...REQUIRED, DOCS_URL: value })).toThrow(/DOCS_URL/);
    }
  });
});

describe("DB_SYNCHRONOUS_COMMIT", () => {
  it("defaults to off: a commit does not wait for the disk flush (docs/DESIGN.md, Commit durability)", () => {
    expect(loadConfig(REQUIRED).DB_SYNCHRONOUS_COMMIT).toBe("off");
  });

  it("refuses a value PostgreSQL's synchronous_commit does not take here, naming the variable", () => {
    expect(() => loadConfig({ ...REQUIRED, DB_SYNCHRONOUS_COMMIT: "sometimes" })).toThrow(/DB_SYNCHRONOUS_COMMIT/);
  });
});

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The committed document (what the gateway serves and the tests validate against). */
export const OPENAPI_FILE = fileURLToPath(new URL("./openapi.json", import.meta.url));

export function readCommittedOpenapi(): string {
  return readFileSync(OPENAPI_FILE, "utf8");
}

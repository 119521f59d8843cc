import { format, resolveConfig } from "prettier";
import { OPENAPI_FILE } from "./openapiFile.js";
import { openapiDocument } from "./openapiDocument.js";

/** The document as `npm run openapi` writes it: JSON in the repository's Prettier style (so `lint` accepts it). */
export async function renderOpenapi(): Promise<string> {
  const options = (await resolveConfig(OPENAPI_FILE)) ?? {};
  return format(JSON.stringify(openapiDocument()), { ...options, parser: "json" });
}

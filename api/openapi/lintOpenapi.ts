import { createConfig, lintFromString } from "@redocly/openapi-core";
import { OPENAPI_FILE, readCommittedOpenapi } from "./openapiFile.js";
import { renderOpenapi } from "./renderOpenapi.js";

/**
 * `npm run lint:openapi`: the committed document is what the code generates (else run `npm run openapi`), and
 * it passes Redocly's recommended rules (offline: no external references).
 */
async function main(): Promise<number> {
  const committed = readCommittedOpenapi();
  if (committed !== (await renderOpenapi())) {
    console.error(
      `${OPENAPI_FILE} is out of date with the HTTP contract (@credit-metered/client/http) and api/openapi/openapiDocument.ts: run \`npm run openapi\`.`,
    );
    return 1;
  }
  const config = await createConfig({
    extends: ["recommended"],
    rules: {
      // Local servers are the point of the document's example server; there is no public host yet.
      "no-server-example.com": "off",
      // The spec leaves the product unlicensed.
      "info-license": "off",
      "info-license-url": "off",
      // ChatCompletionChunk describes each SSE event; OpenAPI 3.1 has no place to reference it from.
      "no-unused-components": "off",
    },
  });
  const problems = await lintFromString({ source: committed, absoluteRef: OPENAPI_FILE, config });
  for (const problem of problems) {
    const where = problem.location.map((location) => location.pointer).join(", ");
    console.error(`${problem.severity} ${problem.ruleId}: ${problem.message} (${where})`);
  }
  const errors = problems.filter((problem) => problem.severity === "error").length;
  const warnings = problems.length - errors;
  console.log(`openapi: ${errors} errors, ${warnings} warnings`);
  return errors > 0 || warnings > 0 ? 1 : 0;
}

process.exitCode = await main();

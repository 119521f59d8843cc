import { writeFileSync } from "node:fs";
import { OPENAPI_FILE } from "./openapiFile.js";
import { renderOpenapi } from "./renderOpenapi.js";

/** `npm run openapi`: regenerates the committed document from `openapiDocument.ts` and the HTTP contract. */
writeFileSync(OPENAPI_FILE, await renderOpenapi());
console.log(`wrote ${OPENAPI_FILE}`);

import { stackSuiteConfig } from "../support/vitestBase.js";

// One real stack (globalSetup.ts); the file's tests run in order since later ones read what earlier ones did.
export default stackSuiteConfig({
  include: ["test/openapi/**/*.test.ts"],
  globalSetup: "test/openapi/globalSetup.ts",
});

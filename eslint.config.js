import js from "@eslint/js";
import tseslint from "typescript-eslint";

// Import boundaries (issue 14). Each file group gets its whole list: in a flat config a later `no-restricted-imports`
// replaces an earlier one for the files both match, it does not add to it.
const viaPackageName = {
  regex: "(^|/)(packages|contracts)/client(/|$)",
  message: "Import the client by its name (@credit-metered/client, /node, /local, /http), never by a path into it.",
};
const webOutside = {
  regex: "^(\\.\\./)+(scripts|api)(/|$)",
  message:
    "The web app never imports scripts/ or api/: shared code lives in @credit-metered/client (types of the HTTP contract: /http).",
};
const benchIntoApi = {
  regex: "^(\\.\\./)+api(/|$)",
  message: "The bench never imports the gateway's internals (api/): use @credit-metered/client or a reader of its own.",
};
const nodeOnly = {
  regex: "^node:",
  message: "The client's root entry is browser-safe: Node APIs belong in its ./node entry (src/node.ts).",
};
const nodeOrLocalEntry = {
  regex: "(^@credit-metered/client/(node|local)$)|(^\\.\\.?/(\\.\\./)*(node|local)(\\.js)?$)",
  message: "The client's root entry is browser-safe: it never imports the ./node or ./local entries.",
};
const packageEscapes = {
  regex: "^(\\.\\./)+(api|scripts|web|worker|bench|indexer|shared|test)(/|$)",
  message: "The client package depends on nothing of the application around it.",
};
const importBoundaries = {
  everywhere: [viaPackageName],
  web: [viaPackageName, webOutside],
  bench: [viaPackageName, benchIntoApi],
  clientEntry: [viaPackageName, nodeOnly, nodeOrLocalEntry, packageEscapes],
  clientNodeOnly: [viaPackageName, packageEscapes],
};
const restrict = (patterns) => ({ "no-restricted-imports": ["error", { patterns }] });

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      "artifacts/**",
      "cache/**",
      "coverage/**",
      "types/**",
      ".local/**",
      "**/.ponder/**",
      "indexer/generated/**",
      "indexer/ponder-env.d.ts",
      "web/dist/**",
      "docs-site/dist/**",
      "bench/results/**",
      "test-results/**",
      "packages/client/src/abis.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  { files: ["**/*.ts", "**/*.tsx"], rules: restrict(importBoundaries.everywhere) },
  { files: ["web/**/*.ts", "web/**/*.tsx"], rules: restrict(importBoundaries.web) },
  { files: ["bench/**/*.ts"], rules: restrict(importBoundaries.bench) },
  { files: ["packages/client/src/**/*.ts"], rules: restrict(importBoundaries.clientEntry) },
  // The ./node and ./local entries may use Node and each other; the package's tests check it against the gateway.
  {
    files: ["packages/client/src/node.ts", "packages/client/src/local.ts"],
    rules: restrict(importBoundaries.clientNodeOnly),
  },
  { files: ["packages/client/src/**/*.test.ts"], rules: restrict(importBoundaries.everywhere) },
  {
    files: ["test/**/*.ts", "**/*.test.ts"],
    rules: { "@typescript-eslint/no-non-null-assertion": "off", "@typescript-eslint/no-unused-expressions": "off" },
  },
);

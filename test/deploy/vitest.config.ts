import { stackSuiteConfig } from "../support/vitestBase.js";

// Deploys with `npm run deploy` to its own `hardhat node` started under a public chain's id (84532, Base Sepolia).
export default stackSuiteConfig({
  include: ["test/deploy/**/*.test.ts"],
  hookTimeout: 180_000,
  testTimeout: 300_000,
});

import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import hardhatToolboxMochaEthers from "@nomicfoundation/hardhat-toolbox-mocha-ethers";
import { defineConfig } from "hardhat/config";

// No compiler downloads are possible here: compile with the WASM build shipped in the `solc` package.
const solcPath = fileURLToPath(import.meta.resolve("solc/soljson.js"));

// Fuzz and invariant effort; `npm run test:contracts` uses the full figures, a quick local loop may lower them.
// 5,000 fuzz runs is OpenZeppelin Contracts' own figure (its foundry.toml); 10,000 cost CI about 300 CPU-seconds of
// its two cores. Hardhat's default seed is a constant, which would make every run try the same inputs: each run draws
// its own instead and prints it, and `FUZZ_SEED` replays one.
const fuzzRuns = Number(process.env.FUZZ_RUNS ?? 5_000);
const fuzzSeed = process.env.FUZZ_SEED ?? `0x${randomBytes(32).toString("hex")}`;
if (process.argv.includes("test")) console.log(`Solidity fuzz seed: ${fuzzSeed} (FUZZ_SEED=${fuzzSeed} replays it)`);
const invariantRuns = Number(process.env.INVARIANT_RUNS ?? 256);
const invariantDepth = Number(process.env.INVARIANT_DEPTH ?? 64);

export default defineConfig({
  plugins: [hardhatToolboxMochaEthers],
  solidity: {
    profiles: {
      default: {
        version: "0.8.30",
        path: solcPath,
        settings: {
          // 200 runs keeps CreditEscrow under the 24,576-byte code-size limit (EIP-170) with its admin rules,
          // batches and spending caps; the gas figures (npm run gas) are measured with this setting.
          optimizer: { enabled: true, runs: 200 },
          evmVersion: "prague",
          viaIR: false,
        },
      },
    },
  },
  paths: {
    sources: "./contracts",
    // `npm run test:contracts` builds its coverage-instrumented contracts into a folder of its own, so the stack
    // suites that run beside it (scripts/runSuites.ts) keep deploying the real artifacts.
    artifacts: process.env.HARDHAT_ARTIFACTS_DIR ?? "./artifacts",
    cache: process.env.HARDHAT_CACHE_DIR ?? "./cache",
    tests: { mocha: "./test/contracts", solidity: "./contracts/test" },
  },
  test: {
    solidity: {
      fuzz: { runs: fuzzRuns, seed: fuzzSeed },
      invariant: { runs: invariantRuns, depth: invariantDepth, failOnRevert: true },
    },
  },
  networks: {
    // The local stack's chain (`hardhat node`). Automining one block per transaction would otherwise push block
    // time a second ahead per block, far past the wall clock the workers stamp receipts with; the escrow bounds
    // a receipt's final-token time by the job's open time, and disputes are timed from it, so chain time must
    // follow the wall clock.
    node: { type: "edr-simulated", chainType: "l1", allowBlocksWithSameTimestamp: true },
    localhost: { type: "http", url: process.env.RPC_URL ?? "http://127.0.0.1:8545" },
  },
});

/**
 * Mutation testing of the product contracts (`npm run test:mutations`; not part of `npm test`). Applies each
 * single-point mutation below to its contract, runs the Solidity unit and audit suites (few fuzz runs) and, if they
 * pass, the TypeScript contract tests; a mutant is killed when any of them fails. Every file is restored afterwards,
 * also on Ctrl-C. Prints one line per mutant and the mutation score; exits 1 if any mutant survives.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

interface Mutant {
  id: string;
  file: string;
  /** Exact text that must occur once in `file`. */
  find: string;
  replace: string;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const MUTANTS: Mutant[] = [
  {
    id: "drop the unbonding guard",
    file: "contracts/WorkerRegistry.sol",
    find: "if (state.status == WorkerStatus.Unbonding && block.timestamp + slashExposure >= state.unlockAt) return false;",
    replace: "",
  },
  {
    id: "drop the receipt-time bounds",
    file: "contracts/CreditEscrow.sol",
    find: `            finalTokenAt > deadline ||
            finalTokenAt > block.timestamp + MAX_CLOCK_SKEW ||
            finalTokenAt + MAX_CLOCK_SKEW < deadline - jobTimeout`,
    replace: "            false",
  },
  {
    id: "pay the wrong worker in a batch",
    file: "contracts/CreditEscrow.sol",
    find: "and(lt(i, count), iszero(eq(mload(add(at, shl(5, i))), item)))",
    replace: "lt(add(i, 1), count)",
  },
  {
    id: "send the fee to the worker",
    file: "contracts/CreditEscrow.sol",
    find: "            workerAmount = units - feeAmount;",
    replace: "            workerAmount = units;",
  },
  {
    id: "skip the reserve debit",
    file: "contracts/escrow/EscrowModule.sol",
    find: "        _reserve -= credits * UNITS_PER_CREDIT;\n",
    replace: "\n",
  },
  {
    id: "ignore pause in settle",
    file: "contracts/CreditEscrow.sol",
    find: `        if (config.paused) revert EnforcedPause();
        Lookups memory lookups;
        SettledJob memory job;`,
    replace: `        Lookups memory lookups;
        SettledJob memory job;`,
  },
  {
    id: "skip the spending-cap check",
    file: "contracts/CreditEscrow.sol",
    find: "        if (held.spendWord != 0 && !_withinCap(held, wallet, credits, strict)) {",
    replace: "        if (false) {",
  },
  {
    id: "skip the key-status check",
    file: "contracts/CreditEscrow.sol",
    find: "        if (lookups.keyStatus != IApiKeyRegistry.KeyStatus.Active) {",
    replace: "        if (false) {",
  },
  {
    id: "move the 500-token threshold by one",
    file: "contracts/libraries/Pricing.sol",
    find: "uint256 internal constant LONG_COMPLETION_THRESHOLD = 500;",
    replace: "uint256 internal constant LONG_COMPLETION_THRESHOLD = 501;",
  },
  {
    id: "swap charge and refund",
    file: "contracts/CreditEscrow.sol",
    find: "job.charged = charged < job.creditsLocked ? charged : job.creditsLocked;",
    replace: "job.charged = charged < job.creditsLocked ? job.creditsLocked - charged : 0;",
  },
  {
    id: "drop the context-window cap",
    file: "contracts/CreditEscrow.sol",
    find: "maxTokens == 0 || maxTokens > lookups.contextWindow ||",
    replace: "maxTokens == 0 ||",
  },
  {
    id: "time the dispute window from the final token only",
    file: "contracts/escrow/EscrowModule.sol",
    find: "return (settledAt > finalTokenAt ? settledAt : finalTokenAt) + _disputeWindow;",
    replace: "return finalTokenAt + _disputeWindow;",
  },
  {
    id: "let anyone refund during the settle grace",
    file: "contracts/escrow/EscrowModule.sol",
    find: "(block.timestamp <= deadline || !byGateway)",
    replace: "(block.timestamp <= deadline)",
  },
  {
    id: "slash half the stake",
    file: "contracts/WorkerRegistry.sol",
    find: "        amount = state.stake;\n",
    replace: "        amount = state.stake / 2;\n",
  },
  {
    id: "pay restitution past the owed queue",
    file: "contracts/escrow/EscrowModule.sol",
    find: "if (_owedHead == _owedQueue.length && _reserve >= credits * UNITS_PER_CREDIT) {",
    replace: "if (_reserve >= credits * UNITS_PER_CREDIT) {",
  },
  {
    id: "skip the treasury transfer",
    file: "contracts/CreditEscrow.sol",
    find: "        _pay(treasury_, feeAmount);\n",
    replace: "\n",
  },
  {
    id: "skip the treasury transfer in a batch",
    file: "contracts/CreditEscrow.sol",
    find: "        _pay(treasury_, totals.feeTotal);\n",
    replace: "\n",
  },
  {
    id: "lose a payout the stablecoin refused",
    file: "contracts/CreditEscrow.sol",
    find: "        _claimable[recipient] += amount;\n",
    replace: "\n",
  },
  {
    id: "keep paying the deployment's treasury after it moved",
    file: "contracts/escrow/EscrowStorage.sol",
    find: "            return next;\n        }\n        return config.treasuryMoved ? _movedTreasury : firstTreasury;",
    replace: "            return next;\n        }\n        return firstTreasury;",
  },
  {
    id: "cache a price version without its prices",
    file: "contracts/CreditEscrow.sol",
    find: "            _versionPrices[index] = prices;\n",
    replace: "\n",
  },
  {
    id: "serve every price version from one cache entry",
    file: "contracts/CreditEscrow.sol",
    find: "            prices = _versionPrices[index];\n",
    replace: "            prices = _versionPrices[1];\n",
  },
  {
    id: "trust the last open check for a request with another key",
    file: "contracts/CreditEscrow.sol",
    find: "            lookups.checkedKeyHash != _word(request, 1) ||\n",
    replace: "",
  },
  {
    id: "open a batch's job against the previous wallet's account",
    file: "contracts/CreditEscrow.sol",
    find: "        if (held.wallet != wallet) {",
    replace: "        if (held.wallet == address(0)) {",
  },
  {
    id: "refund a batch's job to the previous wallet",
    file: "contracts/CreditEscrow.sol",
    find: "if (held.wallet != job.wallet) _hold(held, job.wallet);",
    replace: "if (held.wallet == address(0)) _hold(held, job.wallet);",
  },
  {
    id: "lose the spend window a batch filled",
    file: "contracts/CreditEscrow.sol",
    find: "        if (held.spendChanged) _spend[wallet] = held.spendWord;\n",
    replace: "\n",
  },
  // Issue 22.
  {
    id: "pay a worker beyond its bond in a batch",
    file: "contracts/CreditEscrow.sol",
    find: "        if (charge > room) return type(uint256).max;",
    replace: "",
  },
  {
    id: "pay a worker beyond its bond in settle",
    file: "contracts/CreditEscrow.sol",
    find: "        if (!ok && strict) revert BondInsufficient(job.worker, word.bondOf(), risk, charge);",
    replace: "",
  },
  {
    id: "leave the bond with a cheater",
    file: "contracts/escrow/EscrowModule.sol",
    find: "        _seize(jobId, settlement.worker, credits * UNITS_PER_CREDIT);",
    replace: "",
  },
  {
    id: "let a worker claim during a dispute",
    file: "contracts/escrow/EscrowModule.sol",
    find: "        if (_disputesPending[msg.sender] != 0) revert ICreditEscrow.ClaimFrozen(msg.sender);",
    replace: "",
  },
  {
    id: "withdraw the bond below the charges at risk",
    file: "contracts/escrow/EscrowModule.sol",
    find: "_disputesPending[msg.sender] != 0 || risk >= bond ? 0 : bond - risk;",
    replace: "bond;",
  },
  {
    id: "revert the verdict when the stake token refuses",
    file: "contracts/WorkerRegistry.sol",
    find: "if (amount != 0 && !stakeToken.trySafeTransfer(treasury, amount)) {",
    replace: "if (amount != 0) {\n            stakeToken.safeTransfer(treasury, amount);",
  },
  {
    id: "drop the spending-cap flag on a deposit",
    file: "contracts/escrow/EscrowModule.sol",
    find: "account.lastTopUpAt = uint64(block.timestamp) | (account.lastTopUpAt & SPEND_CAPPED);",
    replace: "account.lastTopUpAt = uint64(block.timestamp);",
  },
  {
    id: "report the spending-cap flag as part of the top-up time",
    file: "contracts/CreditEscrow.sol",
    find: "        account.lastTopUpAt &= ~SPEND_CAPPED;\n",
    replace: "\n",
  },
  {
    id: "leave a batch's charges out of the bond word it stores",
    file: "contracts/CreditEscrow.sol",
    find: "            totals.bondWords[slot] += charge;\n",
    replace: "\n",
  },
  {
    id: "decode a malformed receipt in a batch",
    file: "contracts/CreditEscrow.sol",
    find: "if (wellFormed && ReceiptHash.isCanonical(receipt)) {",
    replace: "if (true) {",
  },
];

const SOLIDITY_SUITES = [
  "contracts/test/AuditFindings.t.sol",
  "contracts/test/ContractsV3.t.sol",
  "contracts/test/CreditEscrow.t.sol",
  "contracts/test/DisputeManager.t.sol",
  "contracts/test/Pricing.t.sol",
  "contracts/test/Receipt.t.sol",
];
const MOCHA_SUITES = [
  "test/contracts/CreditEscrow.test.ts",
  "test/contracts/DisputeManager.test.ts",
  "test/contracts/WorkerRegistry.test.ts",
  "test/contracts/client.test.ts",
];

/** Runs a test suite; asynchronous so that Ctrl-C reaches the handler that restores the sources. */
function passes(args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn("npx", ["hardhat", "test", ...args], {
      cwd: root,
      stdio: "ignore",
      env: { ...process.env, FUZZ_RUNS: process.env.FUZZ_RUNS ?? "64" },
    });
    child.on("exit", (code) => resolve(code === 0));
    child.on("error", () => resolve(false));
  });
}

const originals = new Map<string, string>();
function restoreAll(): void {
  for (const [file, text] of originals) writeFileSync(path.join(root, file), text);
}
process.on("SIGINT", () => {
  restoreAll();
  process.exit(130);
});

const only = process.env.MUTANT;
const selected = only ? MUTANTS.filter((m) => m.id.includes(only)) : MUTANTS;
let killed = 0;
for (const mutant of selected) {
  const file = path.join(root, mutant.file);
  const original = readFileSync(file, "utf8");
  originals.set(mutant.file, original);
  if (original.split(mutant.find).length !== 2) {
    restoreAll();
    throw new Error(`mutant "${mutant.id}": its text must occur exactly once in ${mutant.file}`);
  }
  writeFileSync(file, original.replace(mutant.find, mutant.replace));
  let dead: boolean;
  try {
    dead = !(await passes(["solidity", ...SOLIDITY_SUITES])) || !(await passes(["mocha", ...MOCHA_SUITES]));
  } finally {
    writeFileSync(file, original);
    originals.delete(mutant.file);
  }
  if (dead) ++killed;
  console.log(`${dead ? "killed  " : "SURVIVED"}  ${mutant.id}  (${mutant.file})`);
}
const score = (100 * killed) / selected.length;
console.log(`mutation score: ${killed}/${selected.length} killed (${score.toFixed(1)}%)`);
if (killed !== selected.length) process.exit(1);

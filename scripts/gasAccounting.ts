// Line-item accounting of one transaction's gas from the node's opcode trace (`debug_traceTransaction`), for
// `GAS_TRACE=1 npm run gas` and README "Gas": where a hot path's gas goes, per contract and per kind of cost.
/** What the accounting needs of a provider (Hardhat's ethers provider has it). */
interface TraceProvider {
  send(method: string, params: unknown[]): Promise<unknown>;
  getTransactionReceipt(hash: string): Promise<{ gasUsed: bigint } | null>;
  getTransaction(hash: string): Promise<{ gasLimit: bigint } | null>;
}

interface StructLog {
  op: string;
  gas: number;
  gasCost: number;
  depth: number;
  stack?: string[];
}

interface Trace {
  gas: number;
  structLogs: StructLog[];
}

/** Gas of one transaction: what the sender pays (`gasUsed`), its intrinsic part and the items of execution. */
export interface GasAccount {
  gasUsed: number;
  intrinsic: number;
  execution: number;
  /** "<contract> <kind>" → gas; kinds: SLOAD, SSTORE, LOG, call overhead (cold account access, precompiles),
   *  KECCAK256, compute (everything else: arithmetic, memory, ABI coding, jumps). */
  items: Map<string, number>;
}

const CALLS = new Set(["CALL", "STATICCALL", "DELEGATECALL", "CALLCODE"]);

function kindOf(op: string): string {
  if (op === "SLOAD" || op === "SSTORE") return op;
  if (op.startsWith("LOG")) return "LOG";
  if (op === "KECCAK256" || op === "SHA3") return "KECCAK256";
  if (CALLS.has(op)) return "call overhead";
  return "compute";
}

/** Traces `hash` and adds up its opcodes' gas per contract (named by `names`, lowercase address → name). */
export async function accountGas(
  provider: TraceProvider,
  hash: string,
  to: string,
  names: Map<string, string>,
): Promise<GasAccount> {
  const [trace, receipt, tx] = await Promise.all([
    provider.send("debug_traceTransaction", [hash, { disableStorage: true, disableMemory: true }]) as Promise<Trace>,
    provider.getTransactionReceipt(hash),
    provider.getTransaction(hash),
  ]);
  if (!receipt || !tx) throw new Error(`no receipt for ${hash}`);
  const logs = trace.structLogs;
  const gasUsed = Number(receipt.gasUsed);
  const intrinsic = Number(tx.gasLimit) - (logs[0]?.gas ?? Number(tx.gasLimit));
  const items = new Map<string, number>();
  const add = (key: string, gas: number) => items.set(key, (items.get(key) ?? 0) + gas);
  const nameOf = (address: string) => names.get(address.toLowerCase()) ?? address.slice(0, 10);
  // The contract executing at each depth (depth 1 = the transaction's target).
  const frames: string[] = [nameOf(to)];
  for (let i = 0; i < logs.length; i++) {
    const step = logs[i]!;
    const contract = frames[step.depth - 1] ?? "?";
    if (CALLS.has(step.op)) {
      // The call's own cost = gas before it − gas after it returns − what its callee's opcodes cost.
      let j = i + 1;
      let inner = 0;
      while (j < logs.length && logs[j]!.depth > step.depth) inner += logs[j++]!.gasCost;
      const after = logs[j]?.gas ?? step.gas - step.gasCost;
      const stack = step.stack ?? [];
      const target = `0x${(stack[stack.length - 2] ?? "0").replace(/^0x/, "").padStart(40, "0").slice(-40)}`;
      const callee = nameOf(target);
      const isPrecompile = BigInt(target) < 0x100n;
      add(
        `${contract} ${isPrecompile ? `precompile ${BigInt(target)}` : `call overhead → ${callee}`}`,
        step.gas - after - inner,
      );
      if (!isPrecompile && step.op !== "DELEGATECALL") frames[step.depth] = callee;
      else frames[step.depth] = contract;
      continue;
    }
    add(`${contract} ${kindOf(step.op)}`, step.gasCost);
  }
  return { gasUsed, intrinsic, execution: gasUsed - intrinsic, items };
}

/** The account as aligned text lines, largest items first. */
export function formatAccount(name: string, account: GasAccount): string {
  const lines = [
    `${name}: gasUsed ${account.gasUsed} = intrinsic ${account.intrinsic} + execution ${account.execution}`,
  ];
  const sorted = [...account.items.entries()].sort((a, b) => b[1] - a[1]);
  for (const [item, gas] of sorted) lines.push(`  ${String(gas).padStart(7)}  ${item}`);
  const listed = sorted.reduce((sum, [, gas]) => sum + gas, 0);
  lines.push(`  ${String(account.execution - listed).padStart(7)}  (refunds and rounding)`);
  return lines.join("\n");
}

/** Names a storage slot of the traced transaction's target (e.g. "job word"); undefined when unknown. */
export type SlotLabeler = (slot: bigint) => string | undefined;

/**
 * Where one transaction's gas goes, by component rather than by opcode (docs/DESIGN.md, "Where the gas goes"):
 * intrinsic and calldata; each of the target's storage reads and writes named by `labelSlot` (cold and warm
 * together); the events it logs; KECCAK256 (EIP-712 and slot hashing); each precompile; and every external call
 * as one item, its callee's whole execution and the call's own cost (cold account access included). Everything
 * else the target runs (ABI decoding, memory, arithmetic, jumps) is "escrow code"; SSTORE refunds come last.
 */
export async function componentsOf(
  provider: TraceProvider,
  hash: string,
  names: Map<string, string>,
  labelSlot: SlotLabeler,
): Promise<{ gasUsed: number; items: Map<string, number> }> {
  const [trace, receipt, tx] = await Promise.all([
    provider.send("debug_traceTransaction", [hash, { disableStorage: true, disableMemory: true }]) as Promise<Trace>,
    provider.getTransactionReceipt(hash),
    provider.getTransaction(hash),
  ]);
  if (!receipt || !tx) throw new Error(`no receipt for ${hash}`);
  const logs = trace.structLogs;
  const gasUsed = Number(receipt.gasUsed);
  const items = new Map<string, number>();
  const add = (key: string, gas: number) => items.set(key, (items.get(key) ?? 0) + gas);
  add("intrinsic + calldata", Number(tx.gasLimit) - (logs[0]?.gas ?? Number(tx.gasLimit)));
  for (let i = 0; i < logs.length; i++) {
    const step = logs[i]!;
    if (step.depth !== 1) continue;
    const stack = step.stack ?? [];
    const top = (k: number) => BigInt(stack[stack.length - 1 - k] ?? "0");
    if (CALLS.has(step.op)) {
      // The call's whole cost: gas before it − gas after it returns.
      let j = i + 1;
      while (j < logs.length && logs[j]!.depth > 1) j++;
      const after = logs[j]?.gas ?? step.gas - step.gasCost;
      const target = top(1);
      const callee =
        target < 0x100n
          ? `precompile ${target}${target === 1n ? " (ecrecover)" : ""}`
          : `call → ${names.get(`0x${target.toString(16).padStart(40, "0")}`) ?? "?"}`;
      add(callee, step.gas - after);
      i = j - 1;
      continue;
    }
    if (step.op === "SLOAD" || step.op === "SSTORE") add(`storage: ${labelSlot(top(0)) ?? "other"}`, step.gasCost);
    else if (step.op.startsWith("LOG")) add("events (LOG)", step.gasCost);
    else if (step.op === "KECCAK256" || step.op === "SHA3") add("KECCAK256 (EIP-712, slots)", step.gasCost);
    else add("escrow code", step.gasCost);
  }
  const listed = [...items.values()].reduce((sum, gas) => sum + gas, 0);
  add("SSTORE refunds", gasUsed - listed);
  return { gasUsed, items };
}

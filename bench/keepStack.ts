import { writeFileSync } from "node:fs";
import { obtainStack } from "./obtainStack.js";

/** Starts the bench's stack and keeps it up (Ctrl-C stops it): for profiling against the same settings. */
const stack = await obtainStack((message) => console.error(message));
writeFileSync(".local/bench/stack.json", `${JSON.stringify(stack.info, null, 2)}\n`);
console.error("bench stack up; .local/bench/stack.json written");
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    void stack.stop().then(() => process.exit(0));
  });

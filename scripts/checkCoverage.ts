/**
 * Reads the lcov report `hardhat test --coverage` writes and fails unless every product contract (everything in
 * contracts/ except the Solidity test support in contracts/test/) has at least MIN_LINE_COVERAGE of its lines
 * covered. Hardhat prints the per-file line and statement table itself, just before this.
 */
import { readFileSync } from "node:fs";

const MIN_LINE_COVERAGE = 95;
const LCOV = new URL("../coverage/lcov.info", import.meta.url);

interface FileCoverage {
  file: string;
  found: number;
  hit: number;
}

function parseLcov(text: string): FileCoverage[] {
  const files: FileCoverage[] = [];
  let current: FileCoverage | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("SF:")) current = { file: line.slice(3), found: 0, hit: 0 };
    else if (line.startsWith("LF:") && current) current.found = Number(line.slice(3));
    else if (line.startsWith("LH:") && current) current.hit = Number(line.slice(3));
    else if (line === "end_of_record" && current) {
      files.push(current);
      current = undefined;
    }
  }
  return files;
}

const product = parseLcov(readFileSync(LCOV, "utf8")).filter(
  ({ file }) => /(^|\/)contracts\//.test(file) && !/(^|\/)contracts\/test\//.test(file),
);
if (product.length === 0) {
  console.error("coverage: no product contract found in coverage/lcov.info");
  process.exit(1);
}
const found = product.reduce((sum, file) => sum + file.found, 0);
const hit = product.reduce((sum, file) => sum + file.hit, 0);
const percent = (100 * hit) / found;
const below = product.filter((file) => file.found > 0 && (100 * file.hit) / file.found < MIN_LINE_COVERAGE);
console.log(`coverage: product contracts ${percent.toFixed(2)}% of ${found} lines (${product.length} files)`);
for (const file of below) {
  console.error(`coverage: ${file.file} ${((100 * file.hit) / file.found).toFixed(2)}% < ${MIN_LINE_COVERAGE}%`);
}
if (below.length > 0 || percent < MIN_LINE_COVERAGE) process.exit(1);

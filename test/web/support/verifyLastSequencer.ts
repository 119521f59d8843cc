import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The verify suite runs last: its timeout-refund case moves chain time ahead of the wall clock, after which no
 * settled job could be disputed any more (the dispute window is checked against block time). The rest by name.
 */
export class VerifyLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const isLast = (file: TestSpecification) => file.moduleId.endsWith("verify.test.ts");
    return [...files].sort((a, b) => Number(isLast(a)) - Number(isLast(b)) || a.moduleId.localeCompare(b.moduleId));
  }
}

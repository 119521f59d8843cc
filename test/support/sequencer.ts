import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The conservation check runs last (it audits what every other file did); the rest in name order. */
export class ConservationLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const isLast = (file: TestSpecification) => file.moduleId.endsWith("conservation.test.ts");
    return [...files].sort((a, b) => Number(isLast(a)) - Number(isLast(b)) || a.moduleId.localeCompare(b.moduleId));
  }
}

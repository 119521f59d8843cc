import { BaseSequencer, type TestSpecification } from "vitest/node";

/** A sequencer that runs the file ending in `lastFile` after every other one; the rest in name order. */
export function runsLast(lastFile: string): typeof BaseSequencer {
  return class extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const isLast = (file: TestSpecification) => file.moduleId.endsWith(lastFile);
      return [...files].sort((a, b) => Number(isLast(a)) - Number(isLast(b)) || a.moduleId.localeCompare(b.moduleId));
    }
  };
}

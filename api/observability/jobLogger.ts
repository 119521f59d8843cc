import type { Logger } from "pino";

/**
 * A job's child logger (`job_id` bound), made when the job first logs. pino serializes and redacts a child's
 * bindings when the child is made — 3.6 KB and a redaction pass per job at 200 clients (issue 26) — and nearly
 * every job logs nothing.
 */
export function lazyJobLogger(logger: Logger, jobId: string): () => Logger {
  let child: Logger | undefined;
  return () => (child ??= logger.child({ job_id: jobId }));
}

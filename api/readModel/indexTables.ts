/** What a process that LISTENs on the index's channel tells about the index's tables (api/webhooks/startDispatcher.ts). */
export interface IndexTableListener {
  /** Whether notifications reach the listener: false while its LISTEN connection is down (or never set up). */
  listening(up: boolean): void;
  /** The index committed a block that wrote these tables; `undefined`: any table may have changed. */
  changed(tables: readonly string[] | undefined): void;
}

/**
 * The table names of one of Ponder's live-query notifications (a JSON array of names, sent on each block it commits);
 * `undefined` for anything else, which a listener takes as "any table may have changed".
 */
export function indexTablesOf(payload: string | undefined): readonly string[] | undefined {
  if (payload === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(payload);
    if (Array.isArray(parsed) && parsed.every((name) => typeof name === "string")) return parsed as string[];
  } catch {
    // Falls through: not a list of names.
  }
  return undefined;
}

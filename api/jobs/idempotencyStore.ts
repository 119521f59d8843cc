import { createHash } from "node:crypto";
import type pg from "pg";
import type { Hex } from "viem";

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  stream: boolean;
  includeUsage: boolean;
}

export type IdempotencyClaim =
  | { kind: "claimed" }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "in_progress" }
  | { kind: "reused" };

export function bodyHashOf(body: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(body ?? null))
    .digest("hex");
}

/** Idempotency-Key records (db/migrations/002_idempotency.sql). */
export class IdempotencyStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Claims the key for this body, or says why not (replay, still running, other body). */
  async claim(keyHash: Hex, idempotencyKey: string, bodyHash: string): Promise<IdempotencyClaim> {
    const inserted = await this.pool.query(
      `INSERT INTO idempotency_record (key_hash, idempotency_key, body_hash, state) VALUES ($1, $2, $3, 'in_progress')
       ON CONFLICT DO NOTHING`,
      [keyHash.toLowerCase(), idempotencyKey, bodyHash],
    );
    if ((inserted.rowCount ?? 0) === 1) return { kind: "claimed" };
    const existing = await this.pool.query<{
      body_hash: string;
      state: string;
      response_status: number;
      response_headers: Record<string, string>;
      response_body: unknown;
      stream: boolean;
      include_usage: boolean;
    }>("SELECT * FROM idempotency_record WHERE key_hash = $1 AND idempotency_key = $2", [
      keyHash.toLowerCase(),
      idempotencyKey,
    ]);
    const row = existing.rows[0];
    if (!row) return this.claim(keyHash, idempotencyKey, bodyHash);
    if (row.body_hash !== bodyHash) return { kind: "reused" };
    if (row.state !== "done") return { kind: "in_progress" };
    return {
      kind: "replay",
      response: {
        status: row.response_status,
        headers: row.response_headers,
        body: row.response_body,
        stream: row.stream,
        includeUsage: row.include_usage,
      },
    };
  }

  async complete(keyHash: Hex, idempotencyKey: string, jobId: string, response: StoredResponse): Promise<void> {
    await this.pool.query(
      `UPDATE idempotency_record SET state = 'done', job_id = $3, response_status = $4, response_headers = $5, response_body = $6,
       stream = $7, include_usage = $8 WHERE key_hash = $1 AND idempotency_key = $2`,
      [
        keyHash.toLowerCase(),
        idempotencyKey,
        jobId,
        response.status,
        JSON.stringify(response.headers),
        JSON.stringify(response.body),
        response.stream,
        response.includeUsage,
      ],
    );
  }

  /** Forgets a claim whose request failed without a final answer worth replaying, so a retry runs again. */
  async release(keyHash: Hex, idempotencyKey: string): Promise<void> {
    await this.pool.query(
      "DELETE FROM idempotency_record WHERE key_hash = $1 AND idempotency_key = $2 AND state = 'in_progress'",
      [keyHash.toLowerCase(), idempotencyKey],
    );
  }
}

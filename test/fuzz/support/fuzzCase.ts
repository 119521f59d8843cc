import type { RawRequest } from "./rawHttp.js";

/** Which key a request carries (resolved when it is sent; printed by name). */
export type KeyKind = "funded" | "broke";

/**
 * What a generated request means, beyond "any answer in the spec's format": the facts the oracles need to say
 * which answer is right (oracles.ts).
 */
export type Intent =
  | { kind: "none" }
  /** A chat completion body as a client built it (`jsonBody` is the value before any byte-level corruption). */
  | { kind: "chat"; jsonBody: unknown; bytesIntact: boolean; key: KeyKind | "other" }
  /** `GET /v1/models/{id}` with the decoded id (null when the segment is not valid percent-encoding). */
  | { kind: "model-lookup"; id: string | null; withQuery: boolean }
  /**
   * `GET /v1/jobs` with its documented parameters as sent: each name with every raw value it was given, and the
   * name of a parameter the endpoint does not list, if one was added (`""` when its name is empty).
   */
  | { kind: "jobs-query"; params: { name: string; raw: string; bracketed: boolean }[]; unlisted?: string }
  /** `GET /v1/jobs/{id}` of a job of this key. */
  | { kind: "own-job" }
  /** `POST /v1/webhooks` whose URL host is a literal IP address. */
  | { kind: "webhook-ip"; host: string }
  /** `POST /v1/webhooks` whose URL carries a space or a control character (CR, LF, tab): always refused. */
  | { kind: "webhook-control-url"; url: string }
  /** `POST /v1/webhooks` with an `https` URL under `.invalid` (allowed, never reached), as the client built it. */
  | { kind: "webhook-create"; jsonBody: unknown }
  | { kind: "webhook-list" };

export type FuzzCase = RawRequest & {
  /** The generator that built it, e.g. `chat/mutated messages.0.content ← wrong type`. */
  label: string;
  /** The key placed in `Authorization` by `{{key:funded}}`, if any (requests without a valid key: undefined). */
  key: KeyKind | undefined;
  intent: Intent;
};

/** Live values a request refers to by placeholder, so a generated case stays printable and replayable. */
export type LiveValues = {
  keys: Record<KeyKind, string>;
  /** Jobs of the funded key (settled ones first), newest last. */
  ownJobs: string[];
  /** Webhook ids the fuzzer created. */
  webhooks: string[];
};

const PLACEHOLDER = /\{\{(key|job|webhook):([a-z0-9-]+)\}\}/g;

function valueOf(live: LiveValues, kind: string, arg: string): string {
  if (kind === "key") return live.keys[arg as KeyKind] ?? arg;
  const list = kind === "job" ? live.ownJobs : live.webhooks;
  const index = Number(arg);
  if (list.length === 0) return kind === "job" ? "job_01ARZ3NDEKTSV4RRFFQ69G5FAV" : "wh_01ARZ3NDEKTSV4RRFFQ69G5FAV";
  // `last` is the newest (a dispute needs a job inside its 60 s window).
  return arg === "last" ? list[list.length - 1]! : list[index % list.length]!;
}

function fill(text: string, live: LiveValues): string {
  return text.replace(PLACEHOLDER, (_match, kind: string, arg: string) => valueOf(live, kind, arg));
}

function fillBuffer(buffer: Buffer, live: LiveValues): Buffer {
  // Placeholders are ASCII: splice them in without decoding (the body may hold invalid UTF-8 on purpose).
  const text = buffer.toString("latin1");
  if (!text.includes("{{")) return buffer;
  return Buffer.from(fill(text, live), "latin1");
}

/** The request with its placeholders replaced by live values. */
export function resolveCase(fuzzCase: FuzzCase, live: LiveValues): RawRequest {
  return {
    method: fuzzCase.method,
    target: fill(fuzzCase.target, live),
    headers: fuzzCase.headers.map(([name, value]) => [name, fill(value, live)]),
    ...(fuzzCase.body ? { body: fillBuffer(fuzzCase.body, live) } : {}),
    ...(fuzzCase.rawHead ? { rawHead: fillBuffer(fuzzCase.rawHead, live) } : {}),
  };
}

/** Path templates of the OpenAPI document, matched against a raw (undecoded) request path. */
export function matchTemplate(templates: string[], rawPath: string): string | undefined {
  // Express routes case-insensitively and without regard to one trailing slash: so does the oracle.
  const segments = (rawPath.length > 1 ? rawPath.replace(/\/$/, "") : rawPath).split("/");
  return templates.find((template) => {
    const parts = template.split("/");
    return (
      parts.length === segments.length &&
      parts.every((part, index) =>
        part.startsWith("{") ? segments[index]!.length > 0 : part.toLowerCase() === segments[index]!.toLowerCase(),
      )
    );
  });
}

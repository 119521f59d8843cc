import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { REDACT_PATHS } from "./redactPaths.js";

const KEY = `svc_live_${"A1b2C3d4".repeat(4)}`;
const SECRET = "whsec-do-not-log-0123456789";
const PRIVATE_KEY = `0x${"ab".repeat(32)}`;

function captured(): { logger: ReturnType<typeof pino>; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString("utf8"));
      done();
    },
  });
  return {
    logger: pino({ redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, stream),
    text: () => chunks.join(""),
  };
}

describe("log redaction", () => {
  it("hides the Authorization header, API key headers, cookies and the session cookie set", () => {
    const { logger, text } = captured();
    logger.info({
      req: { headers: { authorization: `Bearer ${KEY}`, "x-api-key": KEY, cookie: `session=${SECRET}` } },
      res: { headers: { "set-cookie": `session=${SECRET}` } },
    });
    expect(text()).not.toContain(KEY);
    expect(text()).not.toContain(SECRET);
    expect(text()).toContain("[redacted]");
  });

  it("hides keys, secrets and private keys at the top of a line and one level down", () => {
    const { logger, text } = captured();
    logger.info({ apiKey: KEY, secret: SECRET, privateKey: PRIVATE_KEY }, "top level");
    logger.info({
      webhook: { secret: SECRET },
      wallet: { apiKey: KEY, api_key: KEY },
      signer: { privateKey: PRIVATE_KEY },
    });
    logger.info({ config: { GATEWAY_PRIVATE_KEY: PRIVATE_KEY, WORKER_GATEWAY_TOKEN: SECRET, DATABASE_URL: SECRET } });
    expect(text()).not.toContain(KEY);
    expect(text()).not.toContain(SECRET);
    expect(text()).not.toContain(PRIVATE_KEY);
  });
});

import type dns from "node:dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyAddress } from "../../api/webhooks/classifyAddress.js";
import { createSender } from "../../api/webhooks/sendDelivery.js";
import type { TargetPolicy } from "../../api/webhooks/targetPolicy.js";
import { webhookUrlProblem } from "../../api/webhooks/validateWebhookUrl.js";
import { startHttpsReceiver, type HttpsReceiver } from "./support/httpsReceiver.js";
import { selfSignedCert, type SelfSignedCert } from "./support/selfSignedCert.js";

// The SSRF rules, address by address (production policy: no private targets, no plain http).

const production = { allowPrivateTargets: false, allowHttpLoopback: false };

describe("classifyAddress", () => {
  it.each([
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "127.0.0.1",
    "127.8.9.10",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fe80::1",
    "fd00::1",
    "fc00::abcd",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "64:ff9b::a00:1",
    "2002:a00:1::1",
  ])("refuses %s", (address) => {
    expect(classifyAddress(address).allowed).toBe(false);
  });

  it.each(["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("allows public %s", (address) => {
    expect(classifyAddress(address).allowed).toBe(true);
  });
});

describe("webhookUrlProblem", () => {
  it.each([
    ["http://example.com/hook", "must use https"],
    ["ftp://example.com/hook", "must use https"],
    ["https://user:pw@example.com/hook", "must not contain credentials"],
    ["https://10.0.0.5/hook", "private or reserved"],
    ["https://[::ffff:127.0.0.1]/hook", "private or reserved"],
    ["https://[fd12::1]/hook", "private or reserved"],
    // Issue 11 item 7: the IPv4-translated form of 127.0.0.1 was accepted.
    ["https://[::ffff:0:7f00:1]/hook", "private or reserved"],
    ["https://[::ffff:7f00:1]/hook", "private or reserved"],
    ["https://[::127.0.0.1]/hook", "private or reserved"],
    ["https://[64:ff9b::a9fe:a9fe]/hook", "private or reserved"],
    ["https://[64:ff9b:1::a00:1]/hook", "private or reserved"],
    ["https://[2002:a9fe:a9fe::1]/hook", "private or reserved"],
    ["https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook", "private or reserved"],
    ["https://0x7f000001/hook", "private or reserved"],
    ["https://2130706433/hook", "private or reserved"],
    ["https://[5f00::1]/hook", "private or reserved"],
    ["https://192.0.0.170/hook", "private or reserved"],
    ["https://169.254.169.254/latest/meta-data", "private or reserved"],
    ["https://localhost/hook", "loopback"],
    ["https://localhost./hook", "loopback"],
    ["https://intranet/hook", "fully qualified"],
    ["not a url", "absolute URL"],
    // Issue 23 item 9: the URL parser drops CR LF and tabs, so the stored URL was delivered to another path.
    ["https://hooks.example.com/a\r\nb", "control characters"],
    ["https://hooks.example.com/a\tb", "control characters"],
    ["https://hooks.example.com/a b", "control characters"],
    [" https://hooks.example.com/hook", "control characters"],
  ])("refuses %j in production", (url, problem) => {
    expect(webhookUrlProblem(url, production)).toContain(problem);
  });

  it("accepts a public https URL", () => {
    expect(webhookUrlProblem("https://hooks.example.com/service?x=1", production)).toBeNull();
  });

  it("accepts plain http only to a loopback host and only with WEBHOOK_ALLOW_HTTP_LOOPBACK", () => {
    const dev = { allowPrivateTargets: false, allowHttpLoopback: true };
    expect(webhookUrlProblem("http://127.0.0.1:9000/hook", dev)).toBeNull();
    expect(webhookUrlProblem("http://localhost:9000/hook", dev)).toBeNull();
    expect(webhookUrlProblem("http://example.com/hook", dev)).toContain("must use https");
    expect(webhookUrlProblem("http://10.0.0.1/hook", dev)).toContain("must use https");
    expect(webhookUrlProblem("http://127.0.0.1:9000/hook", production)).toContain("must use https");
  });
});

// Issue 11 item 7, at delivery: every address DNS answers is classified, the IPv6 forms of private IPv4 included.
// DNS is a TEST DOUBLE here (it is outside the product); the receiver is a real HTTPS server on this host.
describe("delivery-time DNS check", () => {
  let cert: SelfSignedCert;
  let receiver: HttpsReceiver;
  const production: TargetPolicy = { allowPrivateTargets: false, allowHttpLoopback: false };

  beforeAll(async () => {
    cert = selfSignedCert();
    receiver = await startHttpsReceiver(cert, 8780);
  });
  afterAll(async () => {
    await receiver.close();
  });

  const sendWith = async (policy: TargetPolicy, answer: string[]) => {
    const sender = createSender({
      policy,
      timeoutMs: 2_000,
      extraCa: cert.cert,
      resolveHost: async () =>
        answer.map((address): dns.LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 })),
    });
    try {
      return await sender.send({
        url: receiver.url,
        secret: "whsec_dns_test_0123456789",
        body: "{}",
        eventId: "evt_dns",
        attempt: 1,
      });
    } finally {
      sender.close();
    }
  };

  it.each([
    [["::ffff:127.0.0.1"]],
    [["::ffff:0:7f00:1"]],
    [["::7f00:1"]],
    [["64:ff9b::a9fe:a9fe"]],
    [["2002:a00:1::1"]],
    [["2001:0:4136:e378:8000:63bf:80ff:fffe"]],
    [["fd00::1"]],
    [["fe80::1"]],
    [["169.254.169.254"]],
    [["100.64.0.1"]],
    [["8.8.8.8", "10.0.0.1"]],
    [["2606:4700:4700::1111", "::ffff:192.168.1.1"]],
  ])("production settings refuse a name that resolves to %j, without connecting", async (answer) => {
    const before = receiver.requests.length;
    const outcome = await sendWith(production, answer);
    expect(outcome).toMatchObject({ ok: false, statusCode: null });
    expect(outcome.error).toContain("refused target");
    expect(receiver.requests.length).toBe(before);
  });

  it("the local-development setting (WEBHOOK_ALLOW_HTTP_LOOPBACK) still delivers to a name resolving to loopback", async () => {
    const before = receiver.requests.length;
    const outcome = await sendWith({ allowPrivateTargets: false, allowHttpLoopback: true }, ["127.0.0.1"]);
    expect(outcome).toMatchObject({ ok: true, statusCode: 200 });
    expect(receiver.requests.length).toBe(before + 1);
  });

  it("the test/local-stack setting (WEBHOOK_ALLOW_PRIVATE_TARGETS) still delivers to this host", async () => {
    const outcome = await sendWith({ allowPrivateTargets: true, allowHttpLoopback: false }, ["127.0.0.1"]);
    expect(outcome).toMatchObject({ ok: true, statusCode: 200 });
  });
});

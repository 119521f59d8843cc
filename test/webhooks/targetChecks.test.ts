import { describe, expect, it } from "vitest";
import { classifyAddress } from "../../api/webhooks/classifyAddress.js";
import { webhookUrlProblem } from "../../api/webhooks/validateWebhookUrl.js";

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
    ["https://169.254.169.254/latest/meta-data", "private or reserved"],
    ["https://localhost/hook", "loopback"],
    ["https://localhost./hook", "loopback"],
    ["https://intranet/hook", "fully qualified"],
    ["not a url", "absolute URL"],
  ])("refuses %s in production", (url, problem) => {
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

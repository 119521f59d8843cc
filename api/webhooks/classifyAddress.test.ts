import { describe, expect, it } from "vitest";
import { classifyAddress, isLoopbackAddress } from "./classifyAddress.js";
import { checkTargetAddress } from "./targetPolicy.js";

// Issue 11 item 7 (SSRF): every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries, plus multicast
// and the other non-public blocks, is refused under production settings, at its first and last address, and in
// every IPv6 form that reaches an IPv4 address. The range ends are computed here with BigInt arithmetic, not with
// the library the classifier uses.

const production = { allowPrivateTargets: false, allowHttpLoopback: false };

/** [CIDR, registry name]. IANA IPv4 Special-Purpose Address Registry, every entry. */
const IPV4_SPECIAL: Array<[string, string]> = [
  ["0.0.0.0/8", '"This network"'],
  ["0.0.0.0/32", '"This host on this network"'],
  ["10.0.0.0/8", "Private-Use"],
  ["100.64.0.0/10", "Shared Address Space"],
  ["127.0.0.0/8", "Loopback"],
  ["169.254.0.0/16", "Link Local"],
  ["172.16.0.0/12", "Private-Use"],
  ["192.0.0.0/24", "IETF Protocol Assignments"],
  ["192.0.0.0/29", "IPv4 Service Continuity Prefix"],
  ["192.0.0.8/32", "IPv4 dummy address"],
  ["192.0.0.9/32", "Port Control Protocol Anycast"],
  ["192.0.0.10/32", "Traversal Using Relays around NAT Anycast"],
  ["192.0.0.170/32", "NAT64/DNS64 Discovery"],
  ["192.0.0.171/32", "NAT64/DNS64 Discovery"],
  ["192.0.2.0/24", "Documentation (TEST-NET-1)"],
  ["192.31.196.0/24", "AS112-v4"],
  ["192.52.193.0/24", "AMT"],
  ["192.88.99.0/24", "Deprecated (6to4 Relay Anycast)"],
  ["192.168.0.0/16", "Private-Use"],
  ["192.175.48.0/24", "Direct Delegation AS112 Service"],
  ["198.18.0.0/15", "Benchmarking"],
  ["198.51.100.0/24", "Documentation (TEST-NET-2)"],
  ["203.0.113.0/24", "Documentation (TEST-NET-3)"],
  ["240.0.0.0/4", "Reserved"],
  ["255.255.255.255/32", "Limited Broadcast"],
  // Not in the special-purpose registry, refused as well:
  ["224.0.0.0/4", "Multicast (IPv4 Multicast Address Space registry)"],
];

/** IANA IPv6 Special-Purpose Address Registry, every entry, plus the other non-public blocks. */
const IPV6_SPECIAL: Array<[string, string]> = [
  ["::1/128", "Loopback Address"],
  ["::/128", "Unspecified Address"],
  ["::ffff:0:0/96", "IPv4-mapped Address (every IPv4 address in it is special at its ends)"],
  ["64:ff9b::/96", "IPv4-IPv6 Translat. (well-known NAT64; ends embed 0.0.0.0 and 255.255.255.255)"],
  ["64:ff9b:1::/48", "IPv4-IPv6 Translat. (local-use NAT64)"],
  ["100::/64", "Discard-Only Address Block"],
  ["100:0:0:1::/64", "Dummy IPv6 Prefix"],
  ["2001::/23", "IETF Protocol Assignments"],
  ["2001::/32", "TEREDO"],
  ["2001:1::1/128", "Port Control Protocol Anycast"],
  ["2001:1::2/128", "Traversal Using Relays around NAT Anycast"],
  ["2001:1::3/128", "DNS-SD Service Registration Protocol Anycast"],
  ["2001:2::/48", "Benchmarking"],
  ["2001:3::/32", "AMT"],
  ["2001:4:112::/48", "AS112-v6"],
  ["2001:10::/28", "Deprecated (previously ORCHID)"],
  ["2001:20::/28", "ORCHIDv2"],
  ["2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix"],
  ["2001:db8::/32", "Documentation"],
  ["2002::/16", "6to4"],
  ["2620:4f:8000::/48", "Direct Delegation AS112 Service"],
  ["3fff::/20", "Documentation"],
  ["5f00::/16", "Segment Routing (SRv6) SIDs"],
  ["fc00::/7", "Unique-Local"],
  ["fe80::/10", "Link-Local Unicast"],
  // Not in the special-purpose registry, refused as well:
  ["::/96", "IPv4-compatible (deprecated, RFC 4291)"],
  ["::ffff:0:0:0/96", "IPv4-translated (RFC 6145)"],
  ["fec0::/10", "Site-local (deprecated, RFC 3879)"],
  ["ff00::/8", "Multicast"],
];

function v4ToInt(text: string): bigint {
  return text.split(".").reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}
function intToV4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join(".");
}
function v6ToInt(text: string): bigint {
  const [head = "", tail] = text.split("::");
  const headWords = head === "" ? [] : head.split(":");
  const tailWords = tail === undefined || tail === "" ? [] : tail.split(":");
  const words = [...headWords, ...Array<string>(8 - headWords.length - tailWords.length).fill("0"), ...tailWords];
  return words.reduce((acc, word) => (acc << 16n) | BigInt(Number.parseInt(word, 16)), 0n);
}
function intToV6(value: bigint): string {
  return Array.from({ length: 8 }, (_, i) => ((value >> BigInt((7 - i) * 16)) & 0xffffn).toString(16)).join(":");
}
function ends(cidr: string): [string, string] {
  const [base = "", prefixText = ""] = cidr.split("/");
  const prefix = BigInt(Number(prefixText));
  const v6 = base.includes(":");
  const bits = v6 ? 128n : 32n;
  const start = v6 ? v6ToInt(base) : v4ToInt(base);
  const hostMask = (1n << (bits - prefix)) - 1n;
  const first = start & ~hostMask;
  const last = first | hostMask;
  return v6 ? [intToV6(first), intToV6(last)] : [intToV4(first), intToV4(last)];
}

describe("classifyAddress: every IANA IPv4 special-purpose range", () => {
  it.each(IPV4_SPECIAL)("refuses %s (%s) at both ends", (cidr) => {
    for (const address of ends(cidr)) expect(classifyAddress(address), address).toMatchObject({ allowed: false });
  });

  it.each(IPV4_SPECIAL)("refuses %s (%s) in its IPv4-mapped and NAT64 IPv6 forms", (cidr) => {
    for (const v4 of ends(cidr)) {
      const int = v4ToInt(v4);
      const forms = [
        `::ffff:${v4}`, // IPv4-mapped, dotted
        intToV6((0xffffn << 32n) | int), // IPv4-mapped, hex words (::ffff:7f00:1)
        intToV6((0xffffn << 48n) | int), // IPv4-translated (::ffff:0:7f00:1)
        intToV6(int), // IPv4-compatible (::7f00:1)
        intToV6(v6ToInt("64:ff9b::") | int), // well-known NAT64
        `64:ff9b::${v4}`,
        intToV6(v6ToInt("64:ff9b:1::") | int), // local-use NAT64
        intToV6(v6ToInt("2002::") | (int << 80n)), // 6to4
        intToV6(v6ToInt("2001::") | (~int & 0xffffffffn)), // Teredo (client address obfuscated)
      ];
      for (const address of forms) expect(classifyAddress(address), address).toMatchObject({ allowed: false });
    }
  });
});

describe("classifyAddress: every IANA IPv6 special-purpose range", () => {
  it.each(IPV6_SPECIAL)("refuses %s (%s) at both ends", (cidr) => {
    for (const address of ends(cidr)) expect(classifyAddress(address), address).toMatchObject({ allowed: false });
  });
});

describe("classifyAddress: the forms of the issue", () => {
  it.each([
    "::ffff:0:7f00:1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "64:ff9b::7f00:1",
    "::127.0.0.1",
    "0:0:0:0:0:0:0:1",
  ])("refuses %s", (address) => {
    expect(classifyAddress(address)).toMatchObject({ allowed: false });
  });

  it("names the IPv4 address an IPv4-mapped address reaches", () => {
    expect(classifyAddress("::ffff:10.0.0.1")).toEqual({
      allowed: false,
      reason: "::ffff:10.0.0.1 (reaches IPv4 10.0.0.1) is in a special-purpose range (private)",
    });
  });

  it.each(["localhost", "example.com", "", "127.1", "0x7f000001", "2130706433"])(
    "refuses %j, which is not a canonical IP address",
    (text) => {
      expect(classifyAddress(text)).toEqual({ allowed: false, reason: "not an IP address" });
    },
  );
});

describe("classifyAddress: public unicast, including the neighbours of special ranges", () => {
  it.each([
    "1.1.1.1",
    "8.8.8.8",
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.0",
    "192.0.3.0",
    "192.167.255.255",
    "192.169.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2606:4700:4700::1111",
    "2001:200::1",
    "2001:db7:ffff::1",
    "2001:db9::1",
    "2003::1",
    "2620:4f:8001::1",
    "3fff:1000::1",
    "5eff:ffff::1",
    "5f01::1",
    "fbff:ffff::1",
  ])("allows %s", (address) => {
    expect(classifyAddress(address)).toEqual({ allowed: true });
  });
});

describe("target policy", () => {
  it("production settings refuse every special-purpose address, loopback included", () => {
    for (const address of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "10.0.0.1", "fd00::1"])
      expect(checkTargetAddress(address, production), address).toMatchObject({ allowed: false });
  });

  it("the local-development setting (WEBHOOK_ALLOW_HTTP_LOOPBACK) lets this host's loopback through, nothing else", () => {
    const dev = { allowPrivateTargets: false, allowHttpLoopback: true };
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
      expect(checkTargetAddress(address, dev), address).toEqual({ allowed: true });
    for (const address of ["10.0.0.1", "169.254.169.254", "64:ff9b::7f00:1", "::ffff:0:7f00:1", "fe80::1"])
      expect(checkTargetAddress(address, dev), address).toMatchObject({ allowed: false });
  });

  it("the test/local-stack setting (WEBHOOK_ALLOW_PRIVATE_TARGETS) lets every address through", () => {
    const stack = { allowPrivateTargets: true, allowHttpLoopback: true };
    for (const address of ["127.0.0.1", "::1", "10.0.0.1", "fd00::1", "8.8.8.8"])
      expect(checkTargetAddress(address, stack), address).toEqual({ allowed: true });
  });

  it("a NAT64 address of 127/8 is not this host's loopback", () => {
    expect(isLoopbackAddress("::ffff:127.0.0.1")).toBe(true);
    expect(isLoopbackAddress("64:ff9b::7f00:1")).toBe(false);
  });
});

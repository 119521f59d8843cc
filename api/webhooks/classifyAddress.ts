import net from "node:net";

// Ranges a webhook may never reach in production: private, loopback, link-local, CGNAT, multicast, unspecified,
// documentation/benchmark/reserved, and the IPv6 forms that embed or translate to IPv4 (checked separately below).
const BLOCKED_V4: Array<[string, number]> = [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local (cloud metadata lives here)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved + broadcast
];

const BLOCKED_V6: Array<[string, number]> = [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["100::", 64], // discard
  ["2001::", 32], // Teredo (tunnels to arbitrary IPv4)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4 (embeds IPv4)
  ["fc00::", 7], // unique local (ULA)
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
];

const blockList = new net.BlockList();
for (const [address, prefix] of BLOCKED_V4) blockList.addSubnet(address, prefix, "ipv4");
for (const [address, prefix] of BLOCKED_V6) blockList.addSubnet(address, prefix, "ipv6");

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Whether a literal IP address is a public unicast address a webhook may be delivered to. */
export function classifyAddress(address: string): AddressVerdict {
  const family = net.isIP(address);
  if (family === 0) return { allowed: false, reason: "not an IP address" };
  if (family === 4) {
    return blockList.check(address, "ipv4")
      ? { allowed: false, reason: `non-public IPv4 ${address}` }
      : { allowed: true };
  }
  const embedded = embeddedIPv4(address);
  if (embedded !== null) {
    // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach an IPv4 host:
    // judge that host.
    const verdict = classifyAddress(embedded);
    return verdict.allowed ? verdict : { allowed: false, reason: `${address} maps to ${verdict.reason}` };
  }
  return blockList.check(address, "ipv6")
    ? { allowed: false, reason: `non-public IPv6 ${address}` }
    : { allowed: true };
}

/** The IPv4 address inside an IPv4-mapped, IPv4-compatible or NAT64 IPv6 address, else null. */
function embeddedIPv4(address: string): string | null {
  const words = expandIPv6(address);
  if (!words) return null;
  const firstFiveZero = words.slice(0, 5).every((w) => w === 0);
  const mapped = firstFiveZero && words[5] === 0xffff;
  const compatible = firstFiveZero && words[5] === 0 && (words[6] !== 0 || (words[7] ?? 0) > 1);
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0);
  if (!mapped && !compatible && !nat64) return null;
  const high = words[6] ?? 0;
  const low = words[7] ?? 0;
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Eight 16-bit words of an IPv6 address (dotted IPv4 tails included), or null when it is not IPv6. */
function expandIPv6(address: string): number[] | null {
  if (net.isIP(address) !== 6) return null;
  let text = address.split("%")[0] ?? address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const parts = dotted[1].split(".").map(Number);
    const tail = `${(((parts[0] ?? 0) << 8) | (parts[1] ?? 0)).toString(16)}:${(((parts[2] ?? 0) << 8) | (parts[3] ?? 0)).toString(16)}`;
    text = text.slice(0, text.length - dotted[1].length) + tail;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const headWords = head ? head.split(":").filter((w) => w !== "") : [];
  const tailWords = tail ? tail.split(":").filter((w) => w !== "") : [];
  const missing = 8 - headWords.length - tailWords.length;
  const words = [...headWords, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...tailWords];
  if (words.length !== 8) return null;
  return words.map((w) => Number.parseInt(w, 16));
}

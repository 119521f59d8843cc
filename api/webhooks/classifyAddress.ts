import net from "node:net";
import ipaddr from "ipaddr.js";

// Which addresses a webhook may reach in production. The ranges come from `ipaddr.js` (its `range()` names every
// entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries plus multicast and broadcast), not from a
// hand-kept list: an address is deliverable only when ipaddr.js calls it plain `unicast`.

/**
 * Special-purpose IPv6 blocks ipaddr.js 2.x does not name, so they would come back as `unicast`:
 * - `::/96` IPv4-compatible addresses (deprecated by RFC 4291 §2.5.5.1; some stacks still route them to IPv4);
 * - `100:0:0:1::/64` the dummy IPv6 prefix (RFC 9780, IANA registry 2025).
 */
const EXTRA_IPV6_RANGES: Array<[string, [ipaddr.IPv6, number]]> = [
  ["ipv4Compatible", ipaddr.IPv6.parseCIDR("::/96")],
  ["dummyPrefix", ipaddr.IPv6.parseCIDR("100:0:0:1::/64")],
];

/**
 * The well-known NAT64 prefix (RFC 6052). DNS64 resolvers on IPv6-only networks synthesise `64:ff9b::<IPv4>` for
 * every IPv4-only host, so refusing the whole prefix would refuse every IPv4-only receiver there: the IPv4 address
 * inside is judged instead. The local-use prefix `64:ff9b:1::/48` (RFC 8215) has a network-specific layout and
 * is refused outright.
 */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

export interface AddressClass {
  /** `unicast` for a public unicast address, else the special-purpose range's name (ipaddr.js names). */
  range: string;
  /** The IPv4 address an IPv4-mapped or NAT64 IPv6 address reaches, when it is one, and which form it was. */
  embeddedIPv4?: { address: string; via: "ipv4Mapped" | "nat64" };
}

/**
 * The range of a literal IP address (`null` when `address` is not one). IPv4-mapped (`::ffff:a.b.c.d`) and
 * well-known NAT64 (`64:ff9b::a.b.c.d`) addresses take the range of the IPv4 address they reach. Every other
 * IPv6 form that embeds or tunnels to IPv4 (IPv4-compatible `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`,
 * 6to4 `2002::/16`, Teredo `2001::/32`, local-use NAT64) is a special-purpose range of its own.
 */
export function classifyAddressRange(address: string): AddressClass | null {
  // net.isIP accepts only the canonical textual forms (not `0x7f.1` or `2130706433`); URL parsing has already
  // normalised those in hostnames, and DNS answers are canonical.
  if (net.isIP(address) === 0) return null;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return { range: parsed.range() };
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) {
    const embedded = v6.toIPv4Address();
    return { range: embedded.range(), embeddedIPv4: { address: embedded.toString(), via: "ipv4Mapped" } };
  }
  if (v6.match(NAT64_WELL_KNOWN)) {
    const embedded = new ipaddr.IPv4(v6.toByteArray().slice(12));
    return { range: embedded.range(), embeddedIPv4: { address: embedded.toString(), via: "nat64" } };
  }
  const range = v6.range();
  if (range !== "unicast") return { range };
  const extra = EXTRA_IPV6_RANGES.find(([, cidr]) => v6.match(cidr));
  return { range: extra ? extra[0] : "unicast" };
}

/** Whether a literal IP address is a public unicast address a webhook may be delivered to. */
export function classifyAddress(address: string): AddressVerdict {
  const verdict = classifyAddressRange(address);
  if (!verdict) return { allowed: false, reason: "not an IP address" };
  if (verdict.range === "unicast") return { allowed: true };
  const via = verdict.embeddedIPv4 ? ` (reaches IPv4 ${verdict.embeddedIPv4.address})` : "";
  return { allowed: false, reason: `${address}${via} is in a special-purpose range (${verdict.range})` };
}

/**
 * Whether a literal IP address is this host's loopback: IPv4 127/8, IPv6 ::1, or the IPv4-mapped form of 127/8
 * (a NAT64 address of 127/8 would be the translator's loopback, not ours).
 */
export function isLoopbackAddress(address: string): boolean {
  const verdict = classifyAddressRange(address);
  return verdict?.range === "loopback" && verdict.embeddedIPv4?.via !== "nat64";
}

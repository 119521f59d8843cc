import net from "node:net";
import { classifyAddress, type AddressVerdict } from "./classifyAddress.js";

/** What the deployment allows webhooks to reach (from WEBHOOK_ALLOW_* in api/config.ts). */
export interface TargetPolicy {
  /** Private, loopback, link-local… targets allowed (tests and local stacks only, never production). */
  allowPrivateTargets: boolean;
  /** Plain `http://` to a loopback host allowed (local development); also lets that loopback address through. */
  allowHttpLoopback: boolean;
}

export function isLoopbackHost(hostname: string): boolean {
  // A trailing dot is the same (fully qualified) name.
  const host = hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (net.isIP(host) === 4) return host.startsWith("127.");
  if (net.isIP(host) === 6) return host === "::1" || host === "0:0:0:0:0:0:0:1";
  return false;
}

/** Whether an IP address (a literal in the URL, or one DNS returned) may be connected to under `policy`. */
export function checkTargetAddress(address: string, policy: TargetPolicy): AddressVerdict {
  if (policy.allowPrivateTargets) return { allowed: true };
  if (policy.allowHttpLoopback && isLoopbackHost(address)) return { allowed: true };
  return classifyAddress(address);
}

import net from "node:net";
import { classifyAddress, isLoopbackAddress, type AddressVerdict } from "./classifyAddress.js";

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
  return net.isIP(host) !== 0 && isLoopbackAddress(host);
}

/** Whether an IP address (a literal in the URL, or one DNS returned) may be connected to under `policy`. */
export function checkTargetAddress(address: string, policy: TargetPolicy): AddressVerdict {
  if (policy.allowPrivateTargets) return { allowed: true };
  if (policy.allowHttpLoopback && isLoopbackAddress(address)) return { allowed: true };
  return classifyAddress(address);
}

import net from "node:net";
import { checkTargetAddress, isLoopbackHost, type TargetPolicy } from "./targetPolicy.js";

export const MAX_WEBHOOK_URL_LENGTH = 2048;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
export const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f]/;

/**
 * Why `raw` cannot be a webhook URL, or null when it can. Registration checks what it can without DNS
 * (scheme, credentials, literal IPs, `localhost`); delivery re-checks every resolved address (sendDelivery.ts),
 * because a name can point anywhere later.
 */
export function webhookUrlProblem(raw: string, policy: TargetPolicy): string | null {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  // The URL parser silently drops tabs and line breaks: a URL carrying them would be stored as sent and delivered
  // to another path than it reads. Spaces and other controls are refused alike (issue 23 item 9).
  if (CONTROL_OR_SPACE.test(raw)) return "must not contain spaces or control characters (CR, LF, tab)";
  if (url.username || url.password) return "must not contain credentials";
  if (url.hash) return "must not contain a fragment";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (url.protocol === "http:") {
    if (!(policy.allowHttpLoopback && isLoopbackHost(host))) return "must use https";
  } else if (url.protocol !== "https:") {
    return "must use https";
  }
  if (host === "") return "must name a host";
  if (net.isIP(host) !== 0) {
    const verdict = checkTargetAddress(host, policy);
    if (!verdict.allowed) return `must not target a private or reserved address (${verdict.reason})`;
  } else if (isLoopbackHost(host) && !policy.allowPrivateTargets && !policy.allowHttpLoopback) {
    return "must not target a loopback host";
  } else if (!host.includes(".") && !isLoopbackHost(host) && !policy.allowPrivateTargets) {
    // Single-label names resolve through search domains to internal hosts.
    return "must name a fully qualified host";
  }
  return null;
}

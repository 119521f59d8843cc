// The Node-only helpers of the client library (the file system): never bundled for a browser.
import { readFileSync } from "node:fs";
import { type Deployment, parseDeployment } from "./deployment.js";

/** Reads and validates a deployments file. */
export function loadDeployment(path: string): Deployment {
  return parseDeployment(JSON.parse(readFileSync(path, "utf8")));
}

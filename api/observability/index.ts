export { GatewayMetrics, type MetricSources } from "./metrics.js";
export { observeRequests, routeLabelOf } from "./observeRequests.js";
export { logRequests } from "./logRequests.js";

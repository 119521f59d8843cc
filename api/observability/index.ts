export { GatewayMetrics, gatewayMetrics, type MetricSources } from "./metrics.js";
export { metricsRouter } from "./metricsRouter.js";
export { observeRequests, routeLabelOf } from "./observeRequests.js";

/** The gateway ↔ worker protocol is declared once, for both ends, in shared/workerProtocol. */
export * from "../../shared/workerProtocol/index.js";

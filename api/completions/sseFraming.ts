/** Server-Sent Events framing of the spec's streaming response: `data: <json>` then a blank line. */
export function sseEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const SSE_DONE = "data: [DONE]\n\n";

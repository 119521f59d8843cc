// The API reference: Scalar's standalone bundle renders the committed OpenAPI document (openapi.json, beside this
// file). Everything it needs is served from this site: no web fonts (withDefaultFonts), no telemetry, no AI agent
// or MCP generator (they call Scalar's services), no developer toolbar. The browser test asserts that the page
// makes no request to another origin.
/* global Scalar */
Scalar.createApiReference("#reference-root", {
  url: "openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  // The sidebar's "Powered by Scalar" links off the site, which must work offline; the page credits Scalar instead.
  customCss: 'a[href="https://www.scalar.com"] { display: none; }',
});

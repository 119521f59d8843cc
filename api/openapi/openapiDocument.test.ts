import { describe, expect, it } from "vitest";
import { ENDPOINTS, type Endpoint } from "../endpoints/index.js";
import { errorCodesOf, openapiDocument } from "./openapiDocument.js";

// The document is generated from the endpoints the gateway mounts (issue 24 item 3): these pin the link between
// the two, so a new `/v1` endpoint cannot be served undocumented, nor a documented one go unserved.

type Operations = Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
const endpoints = ENDPOINTS as readonly Endpoint<never>[];
const v1 = endpoints.filter((endpoint) => endpoint.path.startsWith("/v1/"));
const paths = openapiDocument().paths as Operations;
const documentPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");

describe("the OpenAPI document, generated from the endpoint declarations", () => {
  it("every /v1 endpoint the gateway mounts declares its operation", () => {
    expect(v1.filter((endpoint) => !endpoint.openapi).map((endpoint) => `${endpoint.method} ${endpoint.path}`)).toEqual(
      [],
    );
  });

  it("holds exactly the declared operations, at the paths the gateway mounts them on", () => {
    const documented = Object.entries(paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    const declared = v1.map((endpoint) => `${endpoint.method} ${documentPath(endpoint.path)}`);
    expect(documented.sort()).toEqual(declared.sort());
  });

  it("lists, by status, every error code an endpoint declares, the authentication errors and any request's", () => {
    for (const endpoint of v1) {
      const operation = paths[documentPath(endpoint.path)]![endpoint.method]!;
      const listed = Object.entries(operation.responses)
        .filter(([status]) => Number(status) >= 400)
        .flatMap(([, response]) => [
          ...String((response as { description: string }).description).matchAll(/`([a-z_]+)`/g),
        ])
        .map((match) => match[1]);
      expect(listed.sort(), `${endpoint.method} ${endpoint.path}`).toEqual([...errorCodesOf(endpoint)].sort());
    }
  });
});

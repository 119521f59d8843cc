import { Hono } from "hono";
import { client, graphql } from "ponder";
import { db } from "ponder:api";
import schema from "ponder:schema";
import { lagRoutes } from "./lag.js";

// Read-only access to the indexed tables: SQL over HTTP for @ponder/client (the gateway), GraphQL for people.
const app = new Hono();

app.use("/sql/*", client({ db, schema }));
app.route("/", lagRoutes);
app.use("/graphql", graphql({ db, schema }));
app.use("/", graphql({ db, schema }));

export default app;

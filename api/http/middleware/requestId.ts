import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";

const CLIENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a sane client-sent `x-request-id` or mints one; every response and log line carries it. */
export const requestId: RequestHandler = (req, res, next) => {
  const sent = req.headers["x-request-id"];
  const id =
    typeof sent === "string" && CLIENT_ID_PATTERN.test(sent) ? sent : `req_${randomUUID().replaceAll("-", "")}`;
  req.headers["x-request-id"] = id;
  res.setHeader("x-request-id", id);
  next();
};

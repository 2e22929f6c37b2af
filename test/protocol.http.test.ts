import { expect } from "chai";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import { inSequence } from "../protocol/http";

/**
 * inSequence (protocol/http.ts) stands in for a list of express layers on the relayer's hot routes
 * (createApp): it must behave as express does with the same handlers mounted one after the other.
 */
describe("protocol/http: inSequence runs middleware as express would, in one layer", function () {
  let server: Server;
  let base: string;
  /** What the handlers saw, in order, for the request under test. */
  let seen: string[];
  const mark =
    (name: string): RequestHandler =>
    (_req, _res, next) => {
      seen.push(name);
      next();
    };
  const errors: ErrorRequestHandler = (err, _req, res, _next) => {
    seen.push(`error:${err instanceof Error ? err.message : String(err)}`);
    res.status(500).json({ error: err instanceof Error ? err.message : String(err) });
  };

  before(async function () {
    const app = express();
    app.use("/order", inSequence(mark("a"), mark("b"), mark("c")));
    app.use("/passed", inSequence(mark("a"), (_req, _res, next) => next(new Error("passed")), mark("never")));
    app.use(
      "/thrown",
      inSequence(mark("a"), () => {
        throw new Error("thrown");
      }, mark("never")),
    );
    app.use("/rejected", inSequence(mark("a"), async () => Promise.reject(new Error("rejected")), mark("never")));
    app.use("/rejected-empty", inSequence(async () => Promise.reject(undefined), mark("never")));
    app.use(
      "/answered",
      inSequence(mark("a"), (_req, res) => void res.json({ answered: true }), mark("never")),
    );
    app.use(
      "/async-next",
      inSequence(
        (_req, _res, next) => void setTimeout(() => next(), 5),
        async (_req, _res, next) => {
          await new Promise((r) => setTimeout(r, 5));
          seen.push("after await");
          next();
        },
        mark("last"),
      ),
    );
    app.use("/body", inSequence(express.json({ limit: 16 }), mark("parsed")));
    app.use(inSequence(), mark("empty sequence passed on"));
    app.use((req, res) => void res.json({ path: req.path, seen }));
    app.use(errors);
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async function () {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => (seen = []));

  const get = async (path: string, init?: RequestInit) => {
    const r = await fetch(`${base}${path}`, init);
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };

  it("runs every handler in order, then the layers after it", async function () {
    const r = await get("/order");
    expect(r.status).to.equal(200);
    expect(seen).to.deep.equal(["a", "b", "c", "empty sequence passed on"]);
  });

  it("an error passed to next, thrown, or a rejected promise skips the rest and reaches the error middleware", async function () {
    for (const [path, message] of [
      ["/passed", "passed"],
      ["/thrown", "thrown"],
      ["/rejected", "rejected"],
    ]) {
      seen = [];
      const r = await get(path);
      expect([r.status, r.body], path).to.deep.equal([500, { error: message }]);
      expect(seen, path).to.deep.equal(["a", `error:${message}`]);
    }
    seen = [];
    const r = await get("/rejected-empty");
    expect(r.status).to.equal(500);
    expect(seen).to.deep.equal(["error:a middleware's promise rejected without a reason"]);
  });

  it("a handler that answers ends the request: nothing after it runs", async function () {
    const r = await get("/answered");
    expect([r.status, r.body]).to.deep.equal([200, { answered: true }]);
    expect(seen).to.deep.equal(["a"]);
  });

  it("waits for a handler that calls next later (after a timer or an await)", async function () {
    await get("/async-next");
    expect(seen).to.deep.equal(["after await", "last", "empty sequence passed on"]);
  });

  it("a body parser inside it parses, and its refusal (413) goes to the error middleware", async function () {
    const ok = await get("/body", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(ok.status).to.equal(200);
    expect(seen).to.deep.equal(["parsed", "empty sequence passed on"]);
    seen = [];
    const big = await get("/body", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ x: "y".repeat(100) }) });
    expect(big.status).to.equal(500);
    expect(seen).to.deep.equal(["error:request entity too large"]);
  });
});

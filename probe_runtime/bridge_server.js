// The loopback HTTP bridge a JavaScript probe serves to its app's MCP server and state query, as
// bridge_server.py does for the Python probes: POST / {"method", "params"} with `Authorization: Bearer <the
// run's secret>` -> {"result"} or {"error"}. A request without the secret is refused (401) and reported
// through `onRefused`. Each method is `async (params) -> result` and throws BridgeError for a caller's
// mistake; `around(fn)` runs it (the probe labels its events "api" there); the reply waits for `settle()`
// (events the call set off) and `flush()` (their acknowledgement). There is deliberately no method that runs
// code. Standard library only.
"use strict";

const crypto = require("crypto");
const http = require("http");

class BridgeError extends Error {}
// a result may carry [AFTER]: a function run once the reply has gone out (not part of the reply)
const AFTER = Symbol("after");

function serve({ host, port, secret, methods, onRefused = () => {}, around = (fn) => fn(), settle = async () => {}, flush = async () => {} }) {
  const expected = Buffer.from(`Bearer ${secret}`);
  const server = http.createServer((req, res) => {
    const reply = (code, body) => {
      const data = JSON.stringify(body);
      res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(data) });
      res.end(data);
    };
    const given = Buffer.from(req.headers.authorization || "");
    if (req.method !== "POST" || given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
      onRefused(`${req.socket.remoteAddress}:${req.socket.remotePort}`);
      return reply(401, { error: "unauthorized" });
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      let method, params;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString() || "{}");
        method = String(body.method);
        params = body.params || {};
        if (typeof params !== "object" || Array.isArray(params)) throw new Error("params must be an object");
      } catch (e) {
        return reply(400, { error: `bad request: ${e.message}` });
      }
      const fn = methods[method];
      if (!fn) return reply(200, { error: `unknown method '${method}' (methods: ${Object.keys(methods).sort().join(", ")})` });
      let box;
      try {
        box = await around(async () => {
          try {
            return { result: await fn(params) };
          } catch (e) {
            return { error: e instanceof BridgeError ? e.message : `${e.name}: ${e.message}` };
          } finally {
            await settle();
          }
        });
      } catch (e) {
        box = { error: `${e.name}: ${e.message}` };
      }
      await flush();
      const after = box.result && box.result[AFTER];
      if (typeof after === "function") res.on("finish", after);
      reply(200, box);
    });
  });
  // Another process of the app's probe may hold the port (the first window's extension host, while a second
  // window runs): this one takes it over once that one is gone.
  // `bound` settles once this one listens (true) or finds the port held by another (false): the probe says it
  // started only then, so whoever waits for that can call the bridge
  let closed = false, retry = null, settled;
  server.bound = new Promise((resolve) => { settled = resolve; });
  const listen = () => { if (!closed) server.listen(Number(port), host || "127.0.0.1"); };
  server.on("listening", () => settled(true));
  server.on("error", (e) => {
    if (e.code === "EADDRINUSE" && !closed) {
      settled(false);
      retry = setTimeout(listen, 500);
    }
  });
  const close = server.close.bind(server);
  server.close = (cb) => {
    closed = true;
    clearTimeout(retry);
    return server.listening ? close(cb) : (cb && cb());
  };
  listen();
  return server;
}

module.exports = { serve, BridgeError, AFTER };

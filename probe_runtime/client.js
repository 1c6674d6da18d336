// Probe client for in-app JavaScript probes (a VS Code extension, a Node app's preload): the same
// authenticated websocket protocol as client.py. Events are numbered and buffered; the connection sends
// them, drops them once acknowledged, and on a lost connection reconnects, says hello again with the secret
// it holds and resends whatever the evaluator has not acknowledged.
//
// - readConfig() reads the one-time run config named by $MCPWORLD_PROBE_CONFIG and deletes the file, so
//   the agent (which starts later) cannot read the secret from it.
// - The wait for the evaluator's welcome starts when the handshake ends, not when the socket is made: an
//   app that blocks its event loop while it loads would otherwise time out a connection being made.
// - An error ends a connection as a close does (Node reports some failed handshakes with no close event).
// - With $MCPWORLD_PROBE_RELAY instead (probe_runtime/relay.py), the secret stays in the relay, a root
//   process: the client speaks the same numbered, acknowledged protocol over the relay's Unix socket, and the
//   relay's welcome brings the rest of the run config (ports, the bridge's secret). openProbe() picks the way.
// - Standard library only: Node's built-in WebSocket (Node 22+, or Node 20 with --experimental-websocket).
"use strict";

const fs = require("fs");
const net = require("net");

const CONFIG_ENV = "MCPWORLD_PROBE_CONFIG";
const RELAY_ENV = "MCPWORLD_PROBE_RELAY";
const NOT_DUMPABLE_ENV = "MCPWORLD_NOT_DUMPABLE";
const WELCOME_MS = 5000;
const RELAY_CONFIG_MS = 30000;

// The process is made non-dumpable before it holds a secret (the runtime's addon, built for the app's Node and
// named by $MCPWORLD_NOT_DUMPABLE): the app user's other programs cannot read its memory. Node has no call for it.
function notDumpable() {
  const addon = process.env[NOT_DUMPABLE_ENV];
  if (!addon) return null;
  try {
    process.dlopen({ exports: {} }, addon);
    return null;
  } catch (e) {
    return `the not-dumpable addon did not load: ${e.message}`;
  }
}

function readConfig(path) {
  path = path || process.env[CONFIG_ENV];
  if (!path || !fs.existsSync(path)) return null;
  const failed = notDumpable();
  if (failed) throw new Error(failed);
  try {
    return JSON.parse(fs.readFileSync(path, "utf8"));
  } finally {
    try { fs.unlinkSync(path); } catch (e) { /* already gone */ }
  }
}

// The client and the run config: from the one-time file, or from the relay's welcome (null outside mcpworld,
// or when the relay refuses this process).
async function openProbe(source = "probe") {
  const cfg = readConfig();
  delete process.env[CONFIG_ENV];
  if (cfg) return { client: new ProbeClient(cfg, source), cfg };
  const relay = process.env[RELAY_ENV];
  if (!relay) return null;
  const failed = notDumpable();
  if (failed) throw new Error(failed);
  const client = new ProbeClient({ relay }, source);
  const config = await client.relayConfig;
  if (!config) { client.close(); return null; }
  return { client, cfg: config };
}

class ProbeClient {
  constructor(cfg, source = "probe", stream = null) {
    this.relay = cfg.relay || null;
    if (!this.relay && typeof WebSocket !== "function") throw new Error("this Node has no WebSocket (Node 22+, or 20 with --experimental-websocket)");
    this.relayConfig = new Promise((resolve) => {
      this.configured = resolve;
      setTimeout(() => resolve(null), this.relay ? RELAY_CONFIG_MS : 0);
    });
    this.url = cfg.url;
    this.token = cfg.token;
    this.runId = cfg.run_id;
    this.app = cfg.app;
    this.source = source;
    this.stream = stream || `${cfg.app}-${source}-${process.pid}`;
    this.seq = -1;
    this.pending = [];      // emitted, not yet acknowledged, in seq order
    this.sent = -1;         // highest seq sent on the current connection
    this.ws = null;
    this.welcomed = false;
    this.closing = false;
    this.backoff = 50;
    this.errors = [];
    this.waiters = [];      // flush() promises waiting for an empty buffer
    this.connect();
  }

  emit(name, payload = {}, ts = null) {
    this.seq += 1;
    const event = { run_id: this.runId, source: this.source, app: this.app, name, payload,
                    seq: this.seq, ts: ts === null ? Date.now() / 1000 : ts };
    this.pending.push(event);
    this.pump();
    return this.seq;
  }

  // Resolves true once every event emitted so far is acknowledged, false after timeoutMs.
  flush(timeoutMs = 5000) {
    if (!this.pending.length) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = { resolve, timer: setTimeout(() => { this.waiters = this.waiters.filter((w) => w !== waiter); resolve(false); }, timeoutMs) };
      this.waiters.push(waiter);
    });
  }

  close() {
    this.closing = true;
    if (this.ws) try { this.ws.close(); } catch (e) { /* closing */ }
  }

  connect() {
    if (this.closing) return;
    if (this.relay) return this.connectRelay();
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (e) {
      return this.lost(null, e);
    }
    this.ws = ws;
    this.welcomed = false;
    let welcomeTimer = null;
    ws.onopen = () => {
      welcomeTimer = setTimeout(() => this.lost(ws, new Error("no welcome")), WELCOME_MS);
      ws.send(JSON.stringify({ type: "hello", token: this.token, stream: this.stream, source: this.source, app: this.app }));
    };
    ws.onmessage = (m) => {
      let msg;
      try { msg = JSON.parse(typeof m.data === "string" ? m.data : m.data.toString()); } catch (e) { return; }
      if (msg.type === "welcome") {
        clearTimeout(welcomeTimer);
        this.welcomed = true;
        this.backoff = 50;
        this.sent = -1;
        this.ack(Number(msg.acked ?? -1));
        this.pump();
      } else if (msg.type === "ack") {
        this.ack(Number(msg.seq));
      }
    };
    ws.onerror = (e) => { clearTimeout(welcomeTimer); this.lost(ws, e.error || new Error(e.message || "websocket error")); };
    ws.onclose = () => { clearTimeout(welcomeTimer); this.lost(ws, null); };
  }

  // The relay's socket, dressed as the websocket the rest of the class speaks to (send, close, handlers).
  connectRelay() {
    const sock = net.createConnection(this.relay);
    const conn = { send: (text) => sock.write(text + "\n"), close: () => sock.destroy() };
    this.ws = conn;
    this.welcomed = false;
    let buffered = "";
    sock.on("connect", () => sock.write(JSON.stringify({ type: "hello" }) + "\n"));
    sock.on("data", (chunk) => {
      buffered += chunk.toString("utf8");
      let nl;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let msg;
        try { msg = JSON.parse(line); } catch (e) { continue; }
        if (msg.type === "welcome") {
          this.welcomed = true;
          this.backoff = 50;
          this.sent = -1;
          this.configured(msg.config);
          this.ack(Number(msg.acked ?? -1));
          this.pump();
        } else if (msg.type === "ack") {
          this.ack(Number(msg.seq));
        } else if (msg.type === "refused") {
          this.errors.push(`refused by the relay: ${msg.reason}`);
          this.configured(null);
          this.closing = true;
          sock.destroy();
        }
      }
    });
    sock.on("error", (e) => this.lost(conn, e));
    sock.on("close", () => this.lost(conn, null));
  }

  // A connection ended (error, close or no welcome): try again once, after a growing pause.
  lost(ws, err) {
    if (ws !== null && ws !== this.ws) return;  // an older connection's late report
    if (err) { this.errors.push(String(err.message || err)); this.errors.splice(0, this.errors.length - 20); }
    if (ws) try { ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null; ws.close(); } catch (e) { /* gone */ }
    this.ws = null;
    this.welcomed = false;
    if (this.closing) return;
    const wait = this.backoff;
    this.backoff = Math.min(this.backoff * 2, 1000);
    setTimeout(() => this.connect(), wait);
  }

  pump() {
    if (!this.ws || !this.welcomed) return;
    for (const e of this.pending) {
      if (e.seq > this.sent) {
        this.ws.send(JSON.stringify({ type: "event", event: e }));
        this.sent = e.seq;
      }
    }
  }

  ack(seq) {
    while (this.pending.length && this.pending[0].seq <= seq) this.pending.shift();
    if (!this.pending.length) {
      for (const w of this.waiters.splice(0)) { clearTimeout(w.timer); w.resolve(true); }
    }
  }
}

module.exports = { readConfig, openProbe, ProbeClient, CONFIG_ENV, RELAY_ENV };

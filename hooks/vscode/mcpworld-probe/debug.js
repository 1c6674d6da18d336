// Breakpoints and debug sessions through VS Code's debug API: `breakpoints_changed` with the whole list,
// `debug_started` / `debug_ended`, and `debug_stopped` where a session pauses (the top frame's file and line).
"use strict";

const vscode = require("vscode");
const state = require("./state");

let started = 0;
let inflight = 0;   // a pause being read (its stack trace), not yet reported
const waiters = new Set();

function settle(outcome) {
  for (const w of waiters) w(outcome);
  waiters.clear();
}

// resolves with "paused", "ended" or "running" (after ms)
function nextPauseOrEnd(ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { waiters.delete(done); resolve("running"); }, ms);
    const done = (outcome) => { clearTimeout(timer); resolve(outcome); };
    waiters.add(done);
  });
}

function pending() {
  return inflight;
}

function breakpoints() {
  return vscode.debug.breakpoints.filter((b) => b instanceof vscode.SourceBreakpoint).map((b) => ({
    path: state.rel(b.location.uri), line: b.location.range.start.line + 1, enabled: b.enabled,
    condition: b.condition ?? null,
  }));
}

// `configuration`: the launch configuration the session came from (the JavaScript debugger runs each
// program as a child session of the one started, named after the program)
function session(s) {
  const c = s.configuration || {};
  let root = s;
  while (root.parentSession) root = root.parentSession;
  return { name: s.name, configuration: root.name, type: s.type, request: c.request ?? null,
           program: c.program ? state.relPath(c.program) : null };
}

function snapshot() {
  const s = vscode.debug.activeDebugSession;
  return { breakpoints: breakpoints(), session: s ? session(s) : null, sessions_started: started };
}

function watch(emit, sub) {
  sub(vscode.debug.onDidChangeBreakpoints(() => emit("breakpoints_changed", { breakpoints: breakpoints() })));
  sub(vscode.debug.onDidStartDebugSession((s) => {
    started += 1;
    emit("debug_started", session(s));
  }));
  sub(vscode.debug.onDidTerminateDebugSession((s) => {
    emit("debug_ended", session(s));
    settle("ended");
  }));
  if (vscode.debug.onDidChangeActiveStackItem) {
    sub(vscode.debug.onDidChangeActiveStackItem((item) => {
      if (!(item instanceof vscode.DebugStackFrame)) return;
      inflight += 1;
      item.session.customRequest("stackTrace", { threadId: item.threadId, startFrame: 0, levels: 1 }).then((r) => {
        const f = r && r.stackFrames && r.stackFrames[0];
        if (!f) return;
        // code-server's debugger names sources as vscode-remote://host:port/path
        const src = f.source && f.source.path;
        const p = src ? state.relPath(src.includes("://") ? vscode.Uri.parse(src).path : src) : null;
        emit("debug_stopped", { ...session(item.session), path: p, line: f.line, function: f.name });
        settle("paused");
      }, () => {}).finally(() => { inflight -= 1; });
    }));
  }
}

module.exports = { snapshot, watch, breakpoints, nextPauseOrEnd, pending };

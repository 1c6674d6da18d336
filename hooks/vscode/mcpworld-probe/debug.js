// Breakpoints and debug sessions through VS Code's debug API: `breakpoints_changed` with the whole list,
// `debug_started` / `debug_ended`, and `debug_stopped` where a session pauses (the top frame's file and line).
// The state keeps every breakpoint by VS Code's own id and every session started since the probe began, by
// its id, with where it last paused (its top frame) and whether it has ended.
"use strict";

const vscode = require("vscode");
const state = require("./state");

const sessions = new Map();   // id -> the session's record, from its start on
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

// source breakpoints (and function breakpoints) by VS Code's id; a logpoint and a hit count are kept too
function breakpoints() {
  const out = [];
  for (const b of vscode.debug.breakpoints) {
    const common = { id: b.id, enabled: b.enabled, condition: b.condition ?? null, hit_condition: b.hitCondition ?? null,
                     log_message: b.logMessage ?? null };
    if (b instanceof vscode.SourceBreakpoint) {
      out.push({ ...common, kind: "source", path: state.rel(b.location.uri), line: b.location.range.start.line + 1 });
    } else if (b instanceof vscode.FunctionBreakpoint) {
      out.push({ ...common, kind: "function", function: b.functionName });
    }
  }
  return out;
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
  return { breakpoints: breakpoints(), session: s ? session(s) : null, debug_sessions: [...sessions.values()] };
}

// How each session ends, from the Debug Adapter Protocol messages: "program" when the adapter reported the
// end (terminated, exited) before VS Code asked it to stop, "user" when VS Code asked first (Stop, Restart,
// Disconnect); and the program's exit code when the adapter reports one.
const endings = new Map();  // session id -> { by, exit_code }

function tracker(s) {
  const end = { by: null, exit_code: null };
  endings.set(s.id, end);
  return {
    onWillReceiveMessage: (m) => {
      if (m.type === "request" && ["disconnect", "terminate", "restart"].includes(m.command) && !end.by) end.by = "user";
    },
    onDidSendMessage: (m) => {
      if (m.type !== "event") return;
      if (m.event === "exited" && m.body) end.exit_code = m.body.exitCode ?? null;
      if ((m.event === "terminated" || m.event === "exited") && !end.by) end.by = "program";
    },
  };
}

function ending(s) {
  const end = endings.get(s.id) || { by: null, exit_code: null };
  return { ended_by: end.by, exit_code: end.exit_code };
}

function watch(emit, sub) {
  sub(vscode.debug.registerDebugAdapterTrackerFactory("*", { createDebugAdapterTracker: tracker }));
  sub(vscode.debug.onDidChangeBreakpoints(() => emit("breakpoints_changed", { breakpoints: breakpoints() })));
  sub(vscode.debug.onDidStartDebugSession((s) => {
    sessions.set(s.id, { id: s.id, ...session(s), parent: s.parentSession ? s.parentSession.id : null, ended: false,
                         ended_by: null, exit_code: null, last_pause: null });
    emit("debug_started", { ...session(s), id: s.id, parent: s.parentSession ? s.parentSession.id : null });
  }));
  sub(vscode.debug.onDidTerminateDebugSession((s) => {
    const rec = sessions.get(s.id);
    if (rec) Object.assign(rec, { ended: true, ...ending(s) });
    emit("debug_ended", { ...session(s), ...ending(s) });
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
        const rec = sessions.get(item.session.id);
        if (rec) rec.last_pause = { path: p, line: f.line, function: f.name };
        emit("debug_stopped", { ...session(item.session), path: p, line: f.line, function: f.name });
        settle("paused");
      }, () => {}).finally(() => { inflight -= 1; });
    }));
  }
}

module.exports = { snapshot, watch, breakpoints, nextPauseOrEnd, pending };

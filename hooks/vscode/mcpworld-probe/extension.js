// mcpworld's probe inside VS Code: an extension in code-server's extension host that reports the editor's
// milestones (themes, settings, editors and tabs, saves, the cursor, folds, files made or renamed through
// VS Code, terminal commands, errors and warnings, extensions installed, breakpoints and debug sessions,
// git's branch and commits) over the evaluator's authenticated websocket, and serves the bridge the VS Code
// MCP server calls (bridge.js). Events emitted while a bridge call runs carry channel "api", the rest "gui".
// It never runs code sent to it. Outside mcpworld (no run config) it does nothing.
"use strict";

const path = require("path");
const vscode = require("vscode");
const { openProbe } = require("./probe_client");
const bridge = require("./bridge");
const state = require("./state");
const git = require("./git");
const debug = require("./debug");

let client = null;
let server = null;

function emit(name, payload = {}) {
  if (client) client.emit(name, { ...payload, channel: bridge.inCall() ? "api" : "gui" });
}

// one event per burst: `key` names what settles (the cursor of a file), the last value wins
const timers = new Map();
function debounced(key, ms, fn) {
  clearTimeout(timers.get(key));
  timers.set(key, setTimeout(() => { timers.delete(key); fn(); }, ms));
}

function pending() {
  return timers.size + git.pending() + debug.pending();
}

async function activate(context) {
  const probe = await openProbe();
  if (!probe) return;
  client = probe.client;
  const cfg = probe.cfg;
  const sub = (d) => context.subscriptions.push(d);

  state.setProbe(context.extension);
  let installed = state.extensions();
  sub(vscode.extensions.onDidChange(() => {
    const now = state.extensions();
    const key = state.extensionKey;
    const was = new Set(installed.map(key)), is = new Set(now.map(key));
    const added = now.filter((e) => !was.has(key(e))), removed = installed.filter((e) => !is.has(key(e)));
    installed = now;
    if (added.length || removed.length) emit("extensions_changed", { added, removed, extensions: now });
  }));

  let settings = state.watchedSettings();
  sub(vscode.workspace.onDidChangeConfiguration((e) => {
    const now = state.watchedSettings();
    for (const [key, scopes] of Object.entries(now)) {
      if (!e.affectsConfiguration(key)) continue;
      for (const scope of ["user", "workspace"]) {
        const before = settings[key][scope], after = scopes[scope];
        if (JSON.stringify(before) === JSON.stringify(after)) continue;
        emit("setting_changed", { key, scope, value: after ?? null, old_value: before ?? null, effective: scopes.effective ?? null });
        if (key === "workbench.colorTheme") emit("theme_changed", { theme: scopes.effective ?? null, old_theme: settings[key].effective ?? null, scope });
      }
    }
    settings = now;
  }));

  sub(vscode.window.tabGroups.onDidChangeTabs((e) => {
    for (const tab of e.opened) {
      const t = state.tab(tab);
      if (t) emit(t.kind === "diff" ? "diff_opened" : "editor_opened", t);
    }
    for (const tab of e.closed) {
      const t = state.tab(tab);
      if (t) emit("editor_closed", t);
    }
  }));

  sub(vscode.window.onDidChangeVisibleTextEditors(() => debounced("visible", 100, () =>
    emit("visible_editors", { editors: state.visibleEditors() }))));

  sub(vscode.window.onDidChangeTextEditorSelection((e) => {
    const file = state.rel(e.textEditor.document.uri);
    if (!file) return;
    debounced(`cursor:${file}`, 150, () => emit("cursor_moved", state.cursor(e.textEditor)));
  }));

  // folding shows only as the visible ranges changing (the extension API has no folding event)
  sub(vscode.window.onDidChangeTextEditorVisibleRanges((e) => {
    const file = state.rel(e.textEditor.document.uri);
    if (!file) return;
    debounced(`ranges:${file}`, 200, () => emit("visible_ranges", {
      path: file, ranges: state.visibleRanges(e.textEditor), lines: e.textEditor.document.lineCount }));
  }));

  sub(vscode.languages.onDidChangeDiagnostics((e) => {
    for (const uri of e.uris) {
      const file = state.rel(uri);
      if (!file || path.isAbsolute(file)) continue;
      debounced(`problems:${file}`, 300, () => emit("problems", { path: file, ...state.problems(uri) }));
    }
  }));

  sub(vscode.workspace.onDidSaveTextDocument((doc) => {
    const file = state.rel(doc.uri);
    if (file) emit("document_saved", { path: file, ...state.text(doc.getText()) });
  }));

  sub(vscode.workspace.onDidCreateFiles((e) => emit("files_created", { paths: e.files.map(state.rel) })));
  sub(vscode.workspace.onDidDeleteFiles((e) => emit("files_deleted", { paths: e.files.map(state.rel) })));
  sub(vscode.workspace.onDidRenameFiles((e) => emit("files_renamed", {
    renames: e.files.map((f) => ({ old: state.rel(f.oldUri), new: state.rel(f.newUri) })) })));

  sub(vscode.window.onDidOpenTerminal((t) => emit("terminal_opened", { name: t.name })));
  const fsPath = (where) => (where ? (typeof where === "string" ? where : where.fsPath) : null);
  // where each command started: the folder the shell reported at its prompt, read when the command starts (the
  // execution's own cwd, read at its end, is sometimes already the folder a `cd` on the same line went to)
  const startedIn = new WeakMap();
  if (vscode.window.onDidStartTerminalShellExecution) {
    sub(vscode.window.onDidStartTerminalShellExecution((e) => {
      startedIn.set(e.execution, fsPath(e.shellIntegration.cwd || e.execution.cwd || e.terminal.creationOptions.cwd)
                                 || state.root());
    }));
  }
  if (vscode.window.onDidEndTerminalShellExecution) {
    sub(vscode.window.onDidEndTerminalShellExecution((e) => {
      // the first command of a new terminal can end before the shell has reported where it is
      const cwd = fsPath(e.execution.cwd || e.shellIntegration.cwd || e.terminal.creationOptions.cwd);
      const start = startedIn.get(e.execution) ?? null;
      emit("terminal_command", { command: e.execution.commandLine.value, cwd, cwd_rel: cwd ? state.relPath(cwd) : null,
                                 start_cwd: start, start_cwd_rel: start ? state.relPath(start) : null,
                                 exit_code: e.exitCode ?? null, terminal: e.terminal.name });
    }));
  }

  debug.watch(emit, sub);
  git.watch(emit, sub);

  server = bridge.serve(cfg, { emit, pending, flush: () => client.flush(5000) });
  await server.bound;  // the bridge answers (or another window's host serves it) before the probe says it started
  emit("probe_started", { workspace: state.root(), version: vscode.version, pid: process.pid,
                          editors: state.visibleEditors(), theme: settings["workbench.colorTheme"].effective ?? null });
}

async function deactivate() {
  if (server) server.close();
  if (client) { await client.flush(2000); client.close(); }
}

module.exports = { activate, deactivate };

// What the probe reads of VS Code: paths relative to the workspace folder, tabs, visible editors, the
// cursor, the watched settings at each scope, and the whole state the state query records.
"use strict";

const crypto = require("crypto");
const path = require("path");
const vscode = require("vscode");

// the settings tasks ask about, read at the user and the workspace scope
const WATCHED = ["workbench.colorTheme", "editor.fontSize", "editor.tabSize", "editor.insertSpaces",
                 "files.autoSave", "files.autoSaveDelay", "editor.wordWrap", "editor.minimap.enabled",
                 "git.blame.editorDecoration.enabled", "editor.lineNumbers"];
const MAX_TEXT = 64 * 1024;

function root() {
  const f = vscode.workspace.workspaceFolders;
  return f && f.length ? f[0].uri.fsPath : null;
}

function relPath(p) {
  const r = root();
  if (!r || !p) return p || null;
  const rel = path.relative(r, p);
  return rel.startsWith("..") || path.isAbsolute(rel) ? p : rel.split(path.sep).join("/");
}

function rel(uri) {
  if (!uri || uri.scheme !== "file") return null;
  return relPath(uri.fsPath);
}

function text(t) {
  return { sha256: crypto.createHash("sha256").update(t).digest("hex"), length: t.length,
           text: t.length <= MAX_TEXT ? t : null };
}

function tab(t) {
  const input = t.input;
  const column = t.group.viewColumn;
  if (input instanceof vscode.TabInputTextDiff) {
    return { kind: "diff", original: rel(input.original), modified: rel(input.modified), column, label: t.label };
  }
  if (input instanceof vscode.TabInputText) {
    const p = rel(input.uri);
    return p ? { kind: "text", path: p, column, preview: t.isPreview, label: t.label } : null;
  }
  return null;
}

function tabs() {
  const out = [];
  for (const g of vscode.window.tabGroups.all) {
    for (const t of g.tabs) {
      const d = tab(t);
      if (d) out.push({ ...d, active: t.isActive && g.isActive });
    }
  }
  return out;
}

function visibleEditors() {
  return vscode.window.visibleTextEditors.map((e) => ({ path: rel(e.document.uri), column: e.viewColumn ?? null }))
    .filter((e) => e.path);
}

function cursor(editor) {
  const pos = editor.selection.active;
  const range = editor.document.getWordRangeAtPosition(pos);
  return { path: rel(editor.document.uri), line: pos.line + 1, character: pos.character + 1,
           word: range ? editor.document.getText(range) : null,
           line_text: editor.document.lineAt(pos.line).text.trim().slice(0, 200),
           selection_empty: editor.selection.isEmpty };
}

// the lines on screen as 1-based [first, last] runs: a folded block is the gap between two runs
function visibleRanges(editor) {
  return editor.visibleRanges.map((r) => [r.start.line + 1, r.end.line + 1]);
}

// a file's errors and warnings as VS Code's language features report them (hints and infos left out)
function problems(uri) {
  const found = vscode.languages.getDiagnostics(uri).filter((d) => d.severity <= vscode.DiagnosticSeverity.Warning);
  return {
    errors: found.filter((d) => d.severity === vscode.DiagnosticSeverity.Error).length,
    warnings: found.filter((d) => d.severity === vscode.DiagnosticSeverity.Warning).length,
    messages: found.slice(0, 20).map((d) => ({ line: d.range.start.line + 1, severity: d.severity === 0 ? "error" : "warning",
                                                message: d.message.slice(0, 200), source: d.source ?? null })),
  };
}

// every workspace file with an error or a warning
function allProblems() {
  const out = {};
  for (const [uri] of vscode.languages.getDiagnostics()) {
    const p = rel(uri);
    if (!p || path.isAbsolute(p)) continue;
    const { errors, warnings } = problems(uri);
    if (errors || warnings) out[p] = { errors, warnings };
  }
  return out;
}

// the extensions installed in the user's extensions folder (the probe's own left out)
let userExtensions = null;
let self = null;
function setProbe(extension) {
  self = extension.id;
  userExtensions = path.dirname(extension.extensionUri.fsPath);
}

const extensionKey = (e) => `${e.id}@${e.version}`;

function extensions() {
  return vscode.extensions.all
    .filter((e) => e.id !== self && path.dirname(e.extensionUri.fsPath) === userExtensions)
    .map((e) => ({ id: e.id.toLowerCase(), version: e.packageJSON.version, name: e.packageJSON.displayName || e.packageJSON.name }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

function watchedSettings() {
  const out = {};
  const conf = vscode.workspace.getConfiguration();
  for (const key of WATCHED) {
    const i = conf.inspect(key) || {};
    out[key] = { user: i.globalValue, workspace: i.workspaceValue ?? i.workspaceFolderValue, effective: conf.get(key) };
  }
  return out;
}

function whole() {
  const active = vscode.window.activeTextEditor;
  return {
    workspace: root(),
    tabs: tabs(),
    editors: visibleEditors(),
    active: active && rel(active.document.uri) ? { ...cursor(active), visible_ranges: visibleRanges(active),
                                                  lines: active.document.lineCount } : null,
    // the workspace's unsaved files (VS Code's own settings files outside it are not the task's)
    dirty: vscode.workspace.textDocuments.map((d) => (d.isDirty ? rel(d.uri) : null)).filter((p) => p && !path.isAbsolute(p)),
    settings: watchedSettings(),
    terminals: vscode.window.terminals.map((t) => t.name),
    problems: allProblems(),
    extensions: extensions(),
  };
}

module.exports = { WATCHED, root, rel, relPath, text, tab, tabs, visibleEditors, cursor, visibleRanges, problems, allProblems, setProbe, extensions, extensionKey, watchedSettings, whole };

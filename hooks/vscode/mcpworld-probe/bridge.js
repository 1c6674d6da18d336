// The methods of the bridge the VS Code MCP server and the state query call, served by the runtime's
// bridge server (probe_runtime/bridge_server.js: the run's secret, a refused request reported as
// `suspected_forgery`). Each method acts through VS Code's own API (editors, workspace edits, settings,
// terminals), so the GUI shows it and the probe sees it as it sees the same action by hand. The reply waits
// until the events the call set off have been emitted (debounced ones too) and acknowledged.
// There is deliberately no method that runs code or an arbitrary command.
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const vscode = require("vscode");
const state = require("./state");
const git = require("./git");
const debug = require("./debug");
const { serve: serveBridge, BridgeError, AFTER } = require("./probe_bridge_server");

let calls = 0;
function inCall() {
  return calls > 0;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function resolvePath(p) {
  if (typeof p !== "string" || !p) throw new BridgeError("a path is required");
  if (p.startsWith("~")) p = path.join(os.homedir(), p.slice(1));
  const root = state.root();
  return path.isAbsolute(p) ? path.normalize(p) : path.join(root || os.homedir(), p);
}

const uriOf = (p) => vscode.Uri.file(resolvePath(p));

// VS Code reports a selection set through the API once the window has taken it: wait for that report (the
// selection it names is the one set), so the probe's debounced cursor event is pending (and the call's settle
// waits for it) before the reply. A selection that is already there changes nothing and is not reported. The
// bound only keeps a window that never answers from holding the call: on a loaded machine the report can take
// seconds (a sized 2 s wait once answered before it)
function selectionReported(editor, pos, ms = 30000) {
  if (editor.selection.isEmpty && editor.selection.active.isEqual(pos)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => { clearTimeout(timer); d.dispose(); resolve(); };
    const d = vscode.window.onDidChangeTextEditorSelection((e) => {
      if (e.textEditor.document === editor.document && e.selections[0] && e.selections[0].active.isEqual(pos)) done();
    });
    const timer = setTimeout(done, ms);
  });
}

async function openDoc(p) {
  const file = resolvePath(p);
  if (!fs.existsSync(file)) throw new BridgeError(`no file ${state.relPath(file)}`);
  return vscode.workspace.openTextDocument(vscode.Uri.file(file));
}

function checkLine(doc, line) {
  if (!(line >= 1 && line <= doc.lineCount)) throw new BridgeError(`line ${line} is outside 1-${doc.lineCount}`);
}

async function apply(edit, what) {
  if (!(await vscode.workspace.applyEdit(edit))) throw new BridgeError(`VS Code refused to ${what}`);
}

// an operation on the workspace's repository: git's refusal as the bridge's error, the repository afterwards
async function gitDo(what, op) {
  const repo = await git.repo().catch((e) => { throw new BridgeError(e.message); });
  try {
    await op(repo);
  } catch (e) {
    throw new BridgeError(`git refused ${what}: ${(e.stderr || e.message || "").trim()}`);
  }
  return git.snapshot();
}

function themes() {
  const out = [];
  for (const ext of vscode.extensions.all) {
    for (const t of (ext.packageJSON.contributes || {}).themes || []) out.push(t.id || t.label);
  }
  return out;
}

function column(beside) {
  return beside ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
}

const METHODS = {
  state: async () => ({ ...state.whole(), ...debug.snapshot(), git: await git.snapshot() }),

  list_files: async ({ folder = "." }) => {
    const base = resolvePath(folder);
    const out = [];
    const walk = (d, depth) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        if (e.name === ".git" || e.name === "node_modules") continue;
        const p = path.join(d, e.name);
        out.push(state.relPath(p) + (e.isDirectory() ? "/" : ""));
        if (e.isDirectory() && depth < 6 && out.length < 2000) walk(p, depth + 1);
      }
    };
    if (!fs.existsSync(base)) throw new BridgeError(`no folder ${state.relPath(base)}`);
    walk(base, 0);
    return { files: out.sort() };
  },

  open_file: async ({ path: p, line, beside = false }) => {
    const doc = await openDoc(p);
    const editor = await vscode.window.showTextDocument(doc, { preview: false, viewColumn: column(beside) });
    if (line) {
      const pos = new vscode.Position(Math.max(0, Math.min(doc.lineCount - 1, line - 1)), 0);
      const reported = selectionReported(editor, pos);
      editor.selection = new vscode.Selection(pos, pos);
      editor.revealRange(new vscode.Range(pos, pos));
      await reported;
    }
    return { path: state.rel(doc.uri), column: editor.viewColumn, lines: doc.lineCount };
  },

  read_file: async ({ path: p }) => {
    const doc = await openDoc(p);
    return { path: state.rel(doc.uri), text: doc.getText(), dirty: doc.isDirty };
  },

  set_cursor: async ({ path: p, line, character = 1 }) => {
    const doc = await openDoc(p);
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    checkLine(doc, line);
    const pos = doc.validatePosition(new vscode.Position(line - 1, Math.max(0, character - 1)));
    const reported = selectionReported(editor, pos);
    editor.selection = new vscode.Selection(pos, pos);
    editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    await reported;
    return state.cursor(editor);
  },

  replace_text: async ({ path: p, find, replace, save = true, whole_word = false }) => {
    if (typeof find !== "string" || !find) throw new BridgeError("`find` must be non-empty text");
    const doc = await openDoc(p);
    await vscode.window.showTextDocument(doc, { preview: false });
    const text = doc.getText();
    const esc = find.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const re = new RegExp(whole_word ? `\\b${esc}\\b` : esc, "g");
    const edit = new vscode.WorkspaceEdit();
    let n = 0;
    for (const m of text.matchAll(re)) {
      edit.replace(doc.uri, new vscode.Range(doc.positionAt(m.index), doc.positionAt(m.index + m[0].length)), replace);
      n += 1;
    }
    if (!n) throw new BridgeError(`'${find}' does not occur in ${state.rel(doc.uri)}`);
    await apply(edit, "edit the file");
    if (save) await doc.save();
    return { path: state.rel(doc.uri), replacements: n, saved: save && !doc.isDirty };
  },

  write_file: async ({ path: p, text, save = true }) => {
    const uri = uriOf(p);
    if (!fs.existsSync(uri.fsPath)) {
      const edit = new vscode.WorkspaceEdit();
      edit.createFile(uri, { ignoreIfExists: true });
      await apply(edit, "create the file");
    }
    // in its editor, as the tool says and as a person edits it
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
    const whole = new vscode.WorkspaceEdit();
    whole.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
    await apply(whole, "write the file");
    if (save) await doc.save();
    return { path: state.rel(uri), length: text.length, saved: save && !doc.isDirty };
  },

  save_file: async ({ path: p }) => {
    const doc = await openDoc(p);
    if (!(await doc.save()) && doc.isDirty) throw new BridgeError(`VS Code did not save ${state.rel(doc.uri)}`);
    return { path: state.rel(doc.uri), saved: true };
  },

  create_file: async ({ path: p, text = "" }) => {
    const uri = uriOf(p);
    if (fs.existsSync(uri.fsPath)) throw new BridgeError(`${state.rel(uri)} already exists`);
    const edit = new vscode.WorkspaceEdit();
    edit.createFile(uri, { contents: Buffer.from(text) });
    await apply(edit, "create the file");
    return { path: state.rel(uri), created: fs.existsSync(uri.fsPath) };
  },

  create_folder: async ({ path: p }) => {
    const uri = uriOf(p);
    await vscode.workspace.fs.createDirectory(uri);
    return { path: state.rel(uri) };
  },

  rename_file: async ({ path: p, new_path }) => {
    const from = uriOf(p), to = uriOf(new_path);
    if (!fs.existsSync(from.fsPath)) throw new BridgeError(`no file ${state.rel(from)}`);
    const edit = new vscode.WorkspaceEdit();
    edit.renameFile(from, to, { overwrite: false });
    await apply(edit, "rename the file");
    return { old: state.rel(from), new: state.rel(to) };
  },

  delete_file: async ({ path: p }) => {
    const uri = uriOf(p);
    if (!fs.existsSync(uri.fsPath)) throw new BridgeError(`no file ${state.rel(uri)}`);
    const edit = new vscode.WorkspaceEdit();
    edit.deleteFile(uri, { recursive: true });
    await apply(edit, "delete the file");
    return { deleted: state.rel(uri) };
  },

  get_settings: async () => state.watchedSettings(),

  set_setting: async ({ key, value, scope = "user" }) => {
    if (typeof key !== "string" || !key) throw new BridgeError("`key` is required");
    if (!["user", "workspace"].includes(scope)) throw new BridgeError("`scope` is user or workspace");
    const target = scope === "workspace" ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    try {
      await vscode.workspace.getConfiguration().update(key, value, target);
    } catch (e) {
      throw new BridgeError(`VS Code refused ${key}: ${e.message}`);
    }
    return { key, scope, value: vscode.workspace.getConfiguration().inspect(key)[scope === "workspace" ? "workspaceValue" : "globalValue"] };
  },

  list_themes: async () => ({ themes: themes(), current: vscode.workspace.getConfiguration().get("workbench.colorTheme") }),

  set_theme: async ({ theme }) => {
    const known = themes();
    if (!known.includes(theme)) throw new BridgeError(`no colour theme '${theme}' (themes: ${known.join(", ")})`);
    await vscode.workspace.getConfiguration().update("workbench.colorTheme", theme, vscode.ConfigurationTarget.Global);
    return { theme };
  },

  run_in_terminal: async ({ command, cwd, timeout = 30 }) => {
    if (typeof command !== "string" || !command.trim()) throw new BridgeError("`command` is required");
    const terminal = vscode.window.createTerminal({ name: "mcp", cwd: cwd ? resolvePath(cwd) : state.root() || undefined });
    terminal.show();
    const integration = terminal.shellIntegration || await new Promise((resolve) => {
      const d = vscode.window.onDidChangeTerminalShellIntegration((e) => {
        if (e.terminal === terminal) { d.dispose(); resolve(e.shellIntegration); }
      });
      setTimeout(() => { d.dispose(); resolve(null); }, 10000);
    });
    if (!integration) {
      terminal.sendText(command, true);
      return { terminal: terminal.name, exit_code: null, note: "no shell integration: sent, not awaited" };
    }
    const execution = integration.executeCommand(command);
    const exit = await new Promise((resolve) => {
      const d = vscode.window.onDidEndTerminalShellExecution((e) => {
        if (e.execution === execution) { d.dispose(); resolve(e.exitCode ?? null); }
      });
      setTimeout(() => { d.dispose(); resolve("timeout"); }, timeout * 1000);
    });
    return { terminal: terminal.name, exit_code: exit === "timeout" ? null : exit, finished: exit !== "timeout" };
  },

  compare_files: async ({ left, right }) => {
    const a = uriOf(left), b = uriOf(right);
    for (const u of [a, b]) if (!fs.existsSync(u.fsPath)) throw new BridgeError(`no file ${state.rel(u)}`);
    await vscode.commands.executeCommand("vscode.diff", a, b, `${path.basename(a.fsPath)} ↔ ${path.basename(b.fsPath)}`);
    return { original: state.rel(a), modified: state.rel(b) };
  },

  list_extensions: async () => ({ extensions: state.extensions() }),

  // VS Code's own install from a package file, as the Extensions view's "Install from VSIX..." does
  install_extension: async ({ vsix }) => {
    const file = resolvePath(vsix);
    if (!file.endsWith(".vsix") || !fs.existsSync(file)) throw new BridgeError(`no extension package (.vsix) at ${vsix}`);
    const before = new Set(state.extensions().map(state.extensionKey));
    const added = new Promise((resolve) => {
      const timer = setTimeout(() => { d.dispose(); resolve(false); }, 15000);
      const d = vscode.extensions.onDidChange(() => {
        if (state.extensions().some((e) => !before.has(state.extensionKey(e)))) { clearTimeout(timer); d.dispose(); resolve(true); }
      });
    });
    try {
      await vscode.commands.executeCommand("workbench.extensions.installExtension", vscode.Uri.file(file));
    } catch (e) {
      throw new BridgeError(`VS Code did not install ${path.basename(file)}: ${e.message}`);
    }
    await added;
    return { extensions: state.extensions() };
  },

  get_problems: async ({ path: p }) => {
    if (!p) return { problems: state.allProblems() };
    const doc = await openDoc(p);
    return { path: state.rel(doc.uri), ...state.problems(doc.uri) };
  },

  rename_symbol: async ({ path: p, line, character, new_name, save = true }) => {
    if (typeof new_name !== "string" || !new_name) throw new BridgeError("`new_name` is required");
    const doc = await openDoc(p);
    await vscode.window.showTextDocument(doc, { preview: false });
    checkLine(doc, line);
    const pos = doc.validatePosition(new vscode.Position(line - 1, Math.max(0, (character || 1) - 1)));
    const range = doc.getWordRangeAtPosition(pos);
    if (!range) throw new BridgeError(`no symbol at ${state.rel(doc.uri)}:${line}:${character}`);
    let edit;
    try {
      edit = await vscode.commands.executeCommand("vscode.executeDocumentRenameProvider", doc.uri, pos, new_name);
    } catch (e) {
      throw new BridgeError(`VS Code cannot rename '${doc.getText(range)}': ${e.message}`);
    }
    if (!edit || !edit.size) throw new BridgeError(`VS Code found nothing to rename at ${state.rel(doc.uri)}:${line}:${character}`);
    await apply(edit, "rename the symbol");
    const files = edit.entries().map(([u]) => u);
    if (save) for (const u of files) await (await vscode.workspace.openTextDocument(u)).save();
    return { renamed: doc.getText(doc.getWordRangeAtPosition(pos) || range), to: new_name,
             files: files.map((u) => state.rel(u)), saved: save };
  },

  fold: async ({ path: p, action = "fold_all", line }) => {
    const commands = { fold_all: "editor.foldAll", unfold_all: "editor.unfoldAll", fold: "editor.fold", unfold: "editor.unfold" };
    if (!commands[action]) throw new BridgeError(`action is one of ${Object.keys(commands).join(", ")}`);
    const doc = await openDoc(p);
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    const args = action === "fold" || action === "unfold" ? [{ levels: 1, selectionLines: [Math.max(0, (line || 1) - 1)] }] : [];
    // the editor folds by the ranges its providers gave it (TypeScript's server for JavaScript, which may still be
    // starting): asked before they answered, Fold All folds nothing. So the providers are asked first, and a Fold
    // All that changed nothing on screen while they know blocks is asked again until the editor has them (at most
    // 10 s: a file already folded whole waits that long)
    const blocks = (await vscode.commands.executeCommand("vscode.executeFoldingRangeProvider", doc.uri)) || [];
    const before = JSON.stringify(state.visibleRanges(editor));
    const folding = action === "fold_all";
    for (const until = Date.now() + 10000; ;) {
      await vscode.commands.executeCommand(commands[action], ...args);
      await sleep(300);
      if (!folding || !blocks.length || JSON.stringify(state.visibleRanges(editor)) !== before || Date.now() > until) break;
    }
    return { path: state.rel(doc.uri), visible_ranges: state.visibleRanges(editor) };
  },

  add_breakpoint: async ({ path: p, line, condition }) => {
    const doc = await openDoc(p);
    checkLine(doc, line);
    const where = new vscode.Location(doc.uri, new vscode.Position(line - 1, 0));
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(where, true, condition || undefined)]);
    await sleep(100);
    return { breakpoints: debug.breakpoints() };
  },

  remove_breakpoint: async ({ path: p, line }) => {
    const file = resolvePath(p);
    const gone = vscode.debug.breakpoints.filter((b) => b instanceof vscode.SourceBreakpoint
      && b.location.uri.fsPath === file && b.location.range.start.line === line - 1);
    if (!gone.length) throw new BridgeError(`no breakpoint at ${state.relPath(file)}:${line}`);
    vscode.debug.removeBreakpoints(gone);
    await sleep(100);
    return { breakpoints: debug.breakpoints() };
  },

  start_debugging: async ({ configuration, wait = 10 }) => {
    const folder = (vscode.workspace.workspaceFolders || [])[0];
    const configs = vscode.workspace.getConfiguration("launch", folder ? folder.uri : undefined).get("configurations") || [];
    if (!configs.some((c) => c.name === configuration)) {
      throw new BridgeError(`no launch configuration '${configuration}' (launch.json has: ${configs.map((c) => c.name).join(", ") || "none"})`);
    }
    // the reply waits (up to `wait` seconds) for the program to pause at a breakpoint or end
    const settled = debug.nextPauseOrEnd(wait * 1000);
    if (!(await vscode.debug.startDebugging(folder, configuration))) throw new BridgeError(`VS Code did not start '${configuration}'`);
    const outcome = await settled;
    return { ...debug.snapshot(), outcome };
  },

  // the program goes on from where it paused (Run > Continue, F5); the reply waits as start_debugging's does
  continue_debugging: async ({ wait = 10 }) => {
    const session = vscode.debug.activeDebugSession;
    if (!session) throw new BridgeError("no debug session is running");
    const settled = debug.nextPauseOrEnd(wait * 1000);
    await vscode.commands.executeCommand("workbench.action.debug.continue");
    const outcome = await settled;
    return { ...debug.snapshot(), outcome };
  },

  // File > Open Folder in this window: the window reloads on the folder (a new extension host; this one
  // ends), so the reply comes first and the switch a moment later
  open_folder: async ({ path: folder }) => {
    const target = resolvePath(folder);
    let stat;
    try { stat = await vscode.workspace.fs.stat(vscode.Uri.file(target)); } catch (e) { stat = null; }
    if (!stat || !(stat.type & vscode.FileType.Directory)) throw new BridgeError(`no folder ${target}`);
    // after the reply: the switch ends this extension host
    return { opening: target, [AFTER]: () => vscode.commands.executeCommand("vscode.openFolder", vscode.Uri.file(target),
                                                                         { forceReuseWindow: true }) };
  },

  stop_debugging: async () => {
    await vscode.debug.stopDebugging();
    return debug.snapshot();
  },

  git_status: async () => {
    const s = await git.snapshot();
    if (!s) throw new BridgeError("the workspace has no git repository");
    return s;
  },

  // with `all`, every change is staged first (Source Control's "Stage All Changes", reported as its own
  // git_state), then committed, as a person does in the Source Control view
  git_commit: async ({ message, all = true }) => {
    if (typeof message !== "string" || !message.trim()) throw new BridgeError("a commit message is required");
    return gitDo("the commit", async (repo) => {
      if (all) {
        await repo.add([]);
        for (let i = 0; i < 60 && !repo.state.indexChanges.length; i++) await sleep(50);
        await git.reported();
      }
      await repo.commit(message, { all });
    });
  },

  git_checkout: async ({ branch }) => {
    if (typeof branch !== "string" || !branch) throw new BridgeError("a branch name is required");
    return gitDo(`to switch to ${branch}`, (repo) => repo.checkout(branch));
  },

  close_all_editors: async () => {
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    return { tabs: state.tabs() };
  },
};

// after the method: whatever it set off (settings, tabs, the debounced cursor) is emitted before the reply
async function settle(pending) {
  await sleep(250);
  for (let i = 0; i < 40 && pending() > 0; i++) await sleep(50);
}

function serve(cfg, { emit, pending, flush }) {
  return serveBridge({
    host: cfg.bind_host, port: cfg.ports.bridge, secret: cfg.secrets.bridge, methods: METHODS,
    onRefused: (peer) => emit("suspected_forgery", { reason: "a bridge request without the run's secret", peer }),
    // events while a call runs (and settles) carry channel "api"
    around: async (fn) => {
      calls += 1;
      try {
        return await fn();
      } finally {
        calls -= 1;
      }
    },
    settle: () => settle(pending),
    flush,
  });
}

module.exports = { serve, inCall, METHODS };

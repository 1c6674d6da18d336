// The workspace's git repository as VS Code's built-in git extension sees it (its API, version 1): the
// branch, the HEAD commit with its message, and how many changes are uncommitted. Reports `git_state` when
// any of them changes, whoever changed it (the Source Control view, the terminal, the agent's bash: git's
// state is the task's outcome, not how it was reached).
"use strict";

const fs = require("fs");
const path = require("path");
const vscode = require("vscode");
const state = require("./state");

let api = null;

async function gitApi() {
  if (api) return api;
  const ext = vscode.extensions.getExtension("vscode.git");
  if (!ext) return null;
  const exports = ext.isActive ? ext.exports : await ext.activate();
  api = exports && exports.enabled ? exports.getAPI(1) : null;
  return api;
}

function repository(a) {
  return a && a.repositories.length ? a.repositories[0] : null;
}

// The git extension finds a workspace's repository a while after it activates (seconds on a loaded
// machine): a call that comes first waits for it, where the workspace has a .git to find.
async function opened(ms = 15000) {
  const a = await gitApi();
  const root = state.root();
  const expected = root && fs.existsSync(path.join(root, ".git"));
  for (let waited = 0; ; waited += 100) {
    const r = repository(a);
    if (r || !expected || waited >= ms) return r;
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function commitInfo(repo, ref) {
  try {
    const c = await repo.getCommit(ref);
    return { hash: c.hash, message: c.message.trim(), parents: c.parents };
  } catch {
    return null;
  }
}

// null when the workspace has no repository
async function snapshot() {
  const repo = await opened();
  if (!repo) return null;
  const s = repo.state;
  const head = s.HEAD || {};
  const commit = head.commit ? await commitInfo(repo, head.commit) : null;
  const branches = {};
  for (const ref of await repo.getBranches({ remote: false }).catch(() => [])) {
    if (ref.name && ref.commit) branches[ref.name] = { commit: ref.commit, message: (await commitInfo(repo, ref.commit) || {}).message ?? null };
  }
  const changed = new Set();
  const where = (c) => state.rel(c.uri) || c.uri.fsPath;
  for (const c of [...s.workingTreeChanges, ...s.indexChanges, ...s.mergeChanges, ...(s.untrackedChanges || [])]) {
    changed.add(where(c));
  }
  const staged = [...new Set(s.indexChanges.map(where))].sort();
  return {
    branch: head.name ?? null,
    commit: commit ? commit.hash : head.commit ?? null,
    message: commit ? commit.message : null,
    parents: commit ? commit.parents : [],
    changes: changed.size,
    changed: [...changed].sort(),
    staged,
    branches,
  };
}

// a change not yet reported (its timer, or the report reading git): the bridge's reply waits for it
let inflight = 0;
function pending() {
  return inflight;
}

function watch(emit, sub) {
  let last = null;
  let timer = null;
  const report = async () => {
    inflight += 1;
    try {
      await reportNow();
    } finally {
      inflight -= 1;
    }
  };
  const reportNow = async () => {
    const now = await snapshot();
    if (!now) return;
    const key = JSON.stringify([now.branch, now.commit, now.changed, now.staged]);
    if (last !== null && key !== last) {
      const { branches, ...head } = now;
      emit("git_state", head);
    }
    last = key;
  };
  const follow = (repo) => sub(repo.state.onDidChange(() => {
    if (timer) clearTimeout(timer);
    else inflight += 1;
    timer = setTimeout(() => { timer = null; inflight -= 1; report(); }, 150);
  }));
  gitApi().then((a) => {
    if (!a) return;
    a.repositories.forEach(follow);
    sub(a.onDidOpenRepository((repo) => { follow(repo); report(); }));
    report();
  });
}

async function repo() {
  const r = await opened();
  if (!r) throw new Error("the workspace has no git repository");
  return r;
}

// resolves once nothing is waiting to be reported (after at least one debounce)
async function reported(ms = 3000) {
  const sleep = (t) => new Promise((r) => setTimeout(r, t));
  await sleep(200);
  for (let waited = 200; waited < ms && inflight > 0; waited += 50) await sleep(50);
}

module.exports = { snapshot, watch, repo, pending, reported };

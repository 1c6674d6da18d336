// mcpworld's probe inside Joplin's terminal client: loaded into the client's own Node process
// (`node --require probe.js .../joplin/main.js`), it wraps Joplin's models (Note, Folder, Tag, Resource), its
// importer and its store's middleware once the app module has loaded, and reports the milestones over the
// evaluator's websocket (probe_client.js). After the TUI is up it starts Joplin's Data API on the run's port
// with the run's token (the MCP server's way in) and serves the bridge (bridge.js) for what the Data API
// cannot do (settings, the selected note, the importer). Events inside a Data API request or a bridge call
// carry channel "api", the rest (typed commands, keys) "gui". Every callback catches its own errors: the TUI
// exits on an unhandled rejection. It never runs code sent to it. Outside mcpworld it does nothing.
"use strict";

const fs = require("fs");
const path = require("path");
const Module = require("module");
const { AsyncLocalStorage } = require("async_hooks");

const MAIN = (() => { try { return fs.realpathSync(process.argv[1] || "."); } catch (e) { return ""; } })();
// Node passes --require to no child, but be sure this is Joplin's own process
if (/\/joplin\/main\.js$/.test(MAIN)) start();

function start() {
  const { readConfig, ProbeClient, CONFIG_ENV } = require("./probe_client");
  const cfg = readConfig();
  delete process.env[CONFIG_ENV];
  if (!cfg) return;
  const JDIR = path.dirname(MAIN);
  const req = (m) => require(require.resolve(m, { paths: [JDIR] }));  // the app's own module instances
  const client = new ProbeClient(cfg);
  const als = new AsyncLocalStorage();

  const emit = (name, payload = {}) => {
    const st = als.getStore();
    try { client.emit(name, { ...payload, channel: st ? st.channel : "gui" }); } catch (e) { /* never break the app */ }
  };
  const safe = (fn) => async (...a) => { try { return await fn(...a); } catch (e) { emit("probe_error", { where: fn.name, error: String(e && e.stack || e).slice(0, 2000) }); } };
  emit("probe_started", { pid: process.pid });

  // ---- programs: the client starts none but its editor (`edit`, with the snapshot's `vi -Z`, which runs no
  // shell command). Any other (the editor setting changed to a shell, ...) is refused and reported before it
  // would start: a program running as the app's user could reach this process's memory.
  // The editor itself runs confined (the runtime's confine.py, Landlock): as the app's user its :r and :w would
  // reach every file of that user (the profile, this probe), so it may read the system and write only in the
  // note's folder (the client's temp folder). Without Landlock it does not start (fails closed).
  const cp = require("child_process");
  const CONFINE = require("path").join(__dirname, "confine.py");
  const isEditor = (file, args) => /(^|\/)vi$/.test(String(file)) && Array.isArray(args) && args[0] === "-Z";
  for (const name of ["spawn", "spawnSync", "execFile", "execFileSync", "exec", "execSync", "fork"]) {
    const original = cp[name];
    cp[name] = function refusing(file, args, ...rest) {
      if ((name === "spawn" || name === "spawnSync") && isEditor(file, args)) {
        const folder = require("path").dirname(String(args[args.length - 1]));
        // -i NONE: no viminfo in HOME (a refused write would stop vi at a prompt)
        return original.call(this, "/usr/bin/python3", [CONFINE, "--write", folder, "--", String(file), "-i", "NONE", ...args], ...rest);
      }
      const argv = [String(file), ...(Array.isArray(args) ? args.map(String) : [])];
      emit("code_run", { surface: "program", code: argv.join(" ").slice(0, 4000), blocked: true });
      const error = new Error(`mcpworld: starting ${argv[0]} is turned off in this run`);
      if (name === "spawnSync") return { pid: 0, output: [], stdout: null, stderr: null, status: null, signal: null, error };
      throw error;
    };
  }

  const CHECKBOX = "todo toggle $n";
  const NOTE_FIELDS = ["id", "title", "body", "parent_id", "is_todo", "todo_completed", "todo_due", "deleted_time", "latitude",
                       "longitude", "altitude", "author", "source_url", "markup_language", "is_conflict"];
  // user settings `config` changes that no app marks public
  const EXTRA_SETTINGS = ["encryption.enabled", "markdown.plugin.softbreaks", "markdown.plugin.typographer"];
  const RES_RE = /:\/([0-9a-f]{32})/g;
  const resIds = (body) => new Set((String(body || "").match(RES_RE) || []).map((s) => s.slice(2)));

  function install(appModule) {
    const Note = req("@joplin/lib/models/Note").default;
    const Folder = req("@joplin/lib/models/Folder").default;
    const Tag = req("@joplin/lib/models/Tag").default;
    const Resource = req("@joplin/lib/models/Resource").default;
    const Setting = req("@joplin/lib/models/Setting").default;
    const BaseApplication = req("@joplin/lib/BaseApplication").default;
    const InteropService = req("@joplin/lib/services/interop/InteropService").default;
    const Api = req("@joplin/lib/services/rest/Api").default;
    const app = appModule.default();

    const AppGui = req("./app-gui");
    const StatusBarWidget = req("./gui/StatusBarWidget").default;
    const folderTitle = async (id) => (id ? ((await Folder.load(id)) || {}).title ?? null : null);
    const noteInfo = async (n) => ({ id: n.id, title: n.title, folder: await folderTitle(n.parent_id), folder_id: n.parent_id || "",
                                     is_todo: !!n.is_todo });
    // how a change was made: "checkbox" (the note list's to-do checkbox: the space key's `todo toggle $n`, or the
    // bridge's toggle_todo), the typed command's name ("done", "set", "todo", ...), or "data_api"
    const how = () => {
      const st = als.getStore();
      return (st && (st.via || st.command)) || (st && st.channel === "api" ? "data_api" : "gui");
    };
    const wrap = (C, fn, around) => { const orig = C[fn]; C[fn] = async function (...args) { return around.call(this, orig.bind(this), ...args); }; };

    // ---- notes ---------------------------------------------------------------------------------------
    wrap(Note, "save", async function (orig, o, options) {
      const old = o && o.id ? await Note.load(o.id) : null;
      const saved = await orig(o, options);
      await safe(async function noteSaved() {
        const now = await Note.load(saved.id);
        if (!now) return;
        const info = await noteInfo(now);
        if (!old) return emit(now.is_todo ? "todo_created" : "note_created", info);
        const changed = ["title", "body", "parent_id", "is_todo", "todo_completed", "todo_due", "latitude", "longitude", "deleted_time"]
          .filter((k) => String(old[k]) !== String(now[k]));
        if (!changed.length) return;
        emit("note_updated", { ...info, changed });
        if (changed.includes("title")) emit("note_renamed", { ...info, old_title: old.title });
        if (changed.includes("body")) {
          emit("note_body_changed", { ...info, body: now.body.slice(0, 4000), old_body: (old.body || "").slice(0, 4000) });
          const before = resIds(old.body);
          for (const rid of resIds(now.body)) {
            if (before.has(rid)) continue;
            const r = await Resource.load(rid);
            emit("resource_attached", { note: info, resource_id: rid, title: r && r.title, mime: r && r.mime, file_extension: r && r.file_extension });
          }
        }
        if (changed.includes("parent_id")) {
          emit("note_moved", { ...info, from_folder: await folderTitle(old.parent_id), from_folder_id: old.parent_id || "" });
        }
        if (changed.includes("todo_completed")) emit(now.todo_completed ? "todo_completed" : "todo_uncompleted", { ...info, via: how() });
        if (changed.includes("todo_due")) emit("todo_due_set", { ...info, todo_due: now.todo_due || 0, old_todo_due: old.todo_due || 0 });
        if (changed.includes("latitude") || changed.includes("longitude")) {
          emit("note_location_set", { ...info, latitude: Number(now.latitude), longitude: Number(now.longitude) });
        }
        if (changed.includes("deleted_time")) emit(now.deleted_time ? "note_trashed" : "note_restored", info);
      })();
      return saved;
    });
    wrap(Note, "batchDelete", async function (orig, ids, options = {}) {
      const infos = [];
      await safe(async function noteDeleting() {
        for (const n of ids && ids.length ? await Note.byIds(ids) : []) infos.push(await noteInfo(n));
      })();
      const r = await orig(ids, options);
      for (const info of infos) emit(options && options.toTrash ? "note_trashed" : "note_deleted", info);
      return r;
    });

    // ---- notebooks -----------------------------------------------------------------------------------
    wrap(Folder, "save", async function (orig, o, options) {
      const old = o && o.id ? await Folder.load(o.id) : null;
      const saved = await orig(o, options);
      await safe(async function folderSaved() {
        const now = await Folder.load(saved.id);
        if (!now) return;
        const info = { id: now.id, title: now.title, parent: await folderTitle(now.parent_id), parent_id: now.parent_id || "" };
        if (!old) return emit("folder_created", info);
        if (old.title !== now.title) emit("folder_renamed", { ...info, old_title: old.title });
        if (!!old.deleted_time !== !!now.deleted_time && now.deleted_time) emit("folder_trashed", info);
      })();
      return saved;
    });
    wrap(Folder, "delete", async function (orig, id, options = {}) {
      const f = await Folder.load(id);
      const r = await orig(id, options);
      if (f && !(options && options.toTrash)) emit("folder_deleted", { id, title: f.title });  // to the trash: its save says so
      return r;
    });

    // ---- tags ----------------------------------------------------------------------------------------
    for (const [fn, name, want] of [["addNote", "tag_added", false], ["removeNote", "tag_removed", true]]) {
      wrap(Tag, fn, async function (orig, tagId, noteId) {
        const had = await Tag.hasNote(tagId, noteId);
        const r = await orig(tagId, noteId);
        if (had === want) {
          await safe(async function tagged() {
            const t = await Tag.load(tagId);
            const n = await Note.load(noteId);
            emit(name, { tag: t && t.title, tag_id: tagId, note: n && await noteInfo(n) });
          })();
        }
        return r;
      });
    }

    // ---- the importer ----------------------------------------------------------------------------------
    const interop = InteropService.prototype;
    const origImport = interop.import;
    interop.import = async function (options) {
      const before = new Set((await Note.all({ fields: ["id"] })).map((n) => n.id));
      const r = await origImport.call(this, options);
      await safe(async function imported() {
        const made = (await Note.all({ fields: ["id", "title", "parent_id"] })).filter((n) => !before.has(n.id));
        emit("imported", { path: options.path, format: options.format || null, folder: await folderTitle(options.destinationFolderId),
                           folder_id: options.destinationFolderId || "", notes: made.map((n) => n.title),
                           note_ids: made.map((n) => n.id) });
      })();
      return r;
    };

    // ---- the UI: the store's actions (selection, settings) -------------------------------------------
    const userSetting = (k) => { try { return Setting.isPublic(k) || EXTRA_SETTINGS.includes(k); } catch (e) { return false; } };
    let selected = null;
    const origMw = BaseApplication.prototype.generalMiddleware;
    BaseApplication.prototype.generalMiddleware = async function (store, next, action) {
      const r = await origMw.call(this, store, next, action);
      await safe(async function stored() {
        if (action.type === "NOTE_SELECT" && action.id && action.id !== selected) {
          selected = action.id;
          const n = await Note.load(action.id);
          if (n) emit("note_opened", await noteInfo(n));
        } else if (action.type === "SETTING_UPDATE_ONE" && userSetting(action.key)) {
          const md = Setting.settingMetadata(action.key);
          emit("setting_changed", { key: action.key, value: md && md.secure ? { set: !!action.value } : action.value });
        }
      })();
      return r;
    };

    // ---- typed commands and Data API requests ----------------------------------------------------------
    const origExec = app.execCommand.bind(app);
    app.execCommand = async (argv) => {
      const st = als.getStore();
      return als.run({ ...(st || {}), channel: st ? st.channel : "gui", command: st && st.command ? st.command : String(argv[0]) }, async () => {
        try {
          const r = await origExec(argv);
          emit("command_run", { argv, ok: true });
          return r;
        } catch (e) {
          emit("command_run", { argv, ok: false, error: String(e && e.message) });
          throw e;
        }
      });
    };
    // the note list's checkbox: the space key opens the prompt with `todo toggle $n` ($n: the note list's selected
    // item) and runs it once confirmed; a command typed after ":" opens an empty prompt
    let promptedWith = null;
    const origPrompt = StatusBarWidget.prototype.prompt;
    StatusBarWidget.prototype.prompt = function (initialText = "", ...rest) {
      promptedWith = initialText;
      return origPrompt.call(this, initialText, ...rest);
    };
    // the command line takes keys once its input field exists (created at the next render, a moment after ':'):
    // keys typed before that go to the key map; what a person waits to see before typing
    const origStatusRender = StatusBarWidget.prototype.render;
    StatusBarWidget.prototype.render = function (...args) {
      const had = !!this.inputEventEmitter_;
      const r = origStatusRender.apply(this, args);
      if (!had && this.inputEventEmitter_) emit("prompt_shown", { initial_text: this.promptState_ ? this.promptState_.initialText : null });
      return r;
    };
    const origPromptCommand = AppGui.prototype.processPromptCommand;
    AppGui.prototype.processPromptCommand = function (cmd) {
      const checkbox = promptedWith === CHECKBOX && typeof cmd === "string" && cmd.trim() === CHECKBOX;
      promptedWith = null;
      return checkbox ? als.run({ channel: "gui", via: "checkbox" }, () => origPromptCommand.call(this, cmd)) : origPromptCommand.call(this, cmd);
    };
    const origRoute = Api.prototype.route;
    Api.prototype.route = function (...args) {
      return als.run({ channel: "api" }, () => origRoute.apply(this, args));
    };

    // the state: every record by its id (titles repeat: two notes, notebooks or tags may share one). A note's
    // notebook title, its tags' titles and its linked resources restate other fields (derived, not compared)
    const crypto = require("crypto");
    const blobHash = (r) => {
      try { return crypto.createHash("sha256").update(fs.readFileSync(Resource.fullPath(r))).digest("hex"); } catch (e) { return null; }
    };
    // every setting a user sees (public in any app; `config` shows the terminal's), passwords as set or not
    const settingKeys = () => Setting.keys(true).concat(EXTRA_SETTINGS.filter((k) => Setting.keyExists(k))).sort();
    const settingValue = (k) => {
      const md = Setting.settingMetadata(k);
      const v = Setting.value(k);
      return md && md.secure ? { set: !!v } : v === undefined ? null : v;
    };
    const state = async () => {
      const folders = await Folder.all({ includeDeleted: true });
      const titles = Object.fromEntries(folders.map((f) => [f.id, f.title]));
      const notes = [];
      for (const n of await Note.all({ includeDeleted: true, fields: NOTE_FIELDS })) {
        notes.push({ id: n.id, title: n.title, body: n.body || "", folder_id: n.parent_id || "", folder: titles[n.parent_id] ?? null,
                     is_todo: !!n.is_todo, completed: !!n.todo_completed, todo_due: n.todo_due || 0, trashed: !!n.deleted_time,
                     latitude: Number(n.latitude), longitude: Number(n.longitude), altitude: Number(n.altitude),
                     author: n.author || "", source_url: n.source_url || "", markup_language: n.markup_language,
                     is_conflict: !!n.is_conflict,
                     tags: (await Tag.tagsByNoteId(n.id)).map((t) => ({ id: t.id, title: t.title })),
                     resources: [...resIds(n.body)].sort() });
      }
      const s = app.store() ? app.store().getState() : {};
      return {
        folders: folders.map((f) => ({ id: f.id, title: f.title, parent_id: f.parent_id || "", icon: f.icon || "", trashed: !!f.deleted_time })),
        notes,
        tags: (await Tag.all()).map((t) => ({ id: t.id, title: t.title, parent_id: t.parent_id || "" })),
        resources: (await Resource.all()).map((r) => ({ id: r.id, title: r.title, mime: r.mime, file_extension: r.file_extension,
                                                      filename: r.filename || "", size: r.size, sha256: blobHash(r) })),
        settings: Object.fromEntries(settingKeys().map((k) => [k, settingValue(k)])),
        selected_note_id: (s.selectedNoteIds || [])[0] || null,
        selected_folder_id: s.selectedFolderId || null,
      };
    };

    // the TUI is up (a one-shot command exits inside start): the Data API, the bridge, then ready
    const origStart = app.start.bind(app);
    app.start = async (argv) => {
      const res = await origStart(argv);
      await safe(async function ready() {
        Setting.setValue("api.token", cfg.secrets.api);
        Setting.setValue("api.port", Number(cfg.ports.api));
        // Joplin's server listens on 127.0.0.1; in a container the MCP server reaches it on the container's address
        const http = require("http");
        const listen = http.Server.prototype.listen;
        http.Server.prototype.listen = function (port, host, ...rest) {
          http.Server.prototype.listen = listen;
          return listen.call(this, port, Number(port) === Number(cfg.ports.api) ? cfg.bind_host || host : host, ...rest);
        };
        const ClipperServer = req("@joplin/lib/ClipperServer").default;
        const cs = ClipperServer.instance();
        cs.initialize();
        cs.setDispatch(() => {});
        void cs.start().catch((e) => emit("probe_error", { where: "data_api", error: String(e) }));
        for (let i = 0; i < 100 && !(cs.server_ && cs.server_.listening); i++) await new Promise((r) => setTimeout(r, 50));
        require("./bridge").serve(cfg, { emit, als, app, models: { Note, Folder, Tag, Setting }, state, flush: () => client.flush(5000) });
        emit("ui_ready", await state());
      })();
      return res;
    };
  }

  // the models are loaded with the app module (main.js: require('./app')), before app.start()
  const origLoad = Module._load;
  Module._load = function (request, parent) {
    const r = origLoad.apply(this, arguments);
    if (request === "./app" && parent && parent.filename === MAIN) {
      Module._load = origLoad;
      try { install(r); } catch (e) { emit("probe_error", { where: "install", error: String(e && e.stack || e).slice(0, 2000) }); }
    }
    return r;
  };
}

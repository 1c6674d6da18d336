// What the Joplin MCP server asks the probe for, beyond the Data API: the state, user settings (the note
// list's sort order), the selected note, Joplin's importer and attachments. Each method goes through the
// client's own commands or store, as the TUI's keys and typed commands do; calls run with channel "api".
"use strict";

const os = require("os");
const path = require("path");
const { serve: serveBridge, BridgeError } = require("./probe_bridge_server");

const SETTINGS = ["notes.sortOrder.field", "notes.sortOrder.reverse", "showCompletedTodos", "uncompletedTodosOnTop",
                  "dateFormat", "timeFormat"];

function serve(cfg, { emit, als, app, models, state, flush }) {
  const { Note, Folder, Setting } = models;
  const expand = (p) => (typeof p === "string" && p.startsWith("~") ? path.join(os.homedir(), p.slice(1)) : p);

  async function folderByTitle(title) {
    const f = (await Folder.all({})).find((x) => x.title === title && !x.deleted_time);
    if (!f) throw new BridgeError(`no notebook '${title}'`);
    return f;
  }
  async function noteByTitle(title, folder) {
    const parent = folder ? (await folderByTitle(folder)).id : null;
    const found = (await Note.all({ fields: ["id", "title", "parent_id", "deleted_time"] }))
      .filter((n) => n.title === title && !n.deleted_time && (!parent || n.parent_id === parent));
    if (!found.length) throw new BridgeError(`no note '${title}'${folder ? ` in '${folder}'` : ""}`);
    if (found.length > 1) throw new BridgeError(`${found.length} notes are titled '${title}': name the notebook`);
    return found[0];
  }

  const methods = {
    state: async () => state(),
    get_settings: async () => Object.fromEntries(SETTINGS.map((k) => [k, Setting.value(k)])),
    set_setting: async ({ key, value }) => {
      if (!SETTINGS.includes(key)) throw new BridgeError(`'${key}' is not one of ${SETTINGS.join(", ")}`);
      Setting.setValue(key, value);
      await Setting.saveAll();
      return { key, value: Setting.value(key) };
    },
    open_note: async ({ note, folder }) => {
      const n = await noteByTitle(note, folder);
      app.store().dispatch({ type: "FOLDER_SELECT", id: n.parent_id });
      await new Promise((r) => setTimeout(r, 300));  // the note list refills, selecting its first note
      app.store().dispatch({ type: "NOTE_SELECT", id: n.id });
      return { id: n.id, title: n.title, folder: (await Folder.load(n.parent_id)).title };
    },
    // the to-do's checkbox in the note list, as the space key ticks it: the same `todo toggle` command, marked so
    toggle_todo: async ({ note, folder }) => {
      const n = await noteByTitle(note, folder);
      const full = await Note.load(n.id);
      if (!full.is_todo) throw new BridgeError(`'${n.title}' is a note, not a to-do: it has no checkbox`);
      await als.run({ channel: "api", via: "checkbox" }, () => app.execCommand(["todo", "toggle", n.id]));
      const now = await Note.load(n.id);
      return { id: n.id, title: n.title, done: !!now.todo_completed };
    },
    import_file: async ({ path: p, folder }) => {
      const f = await folderByTitle(folder);
      await app.execCommand(["import", expand(p), f.title]);
      return { imported: expand(p), folder: f.title };
    },
    attach_file: async ({ note, folder, path: p }) => {
      const n = await noteByTitle(note, folder);
      await app.execCommand(["attach", n.id, expand(p)]);
      return { note: n.title, attached: path.basename(expand(p)) };
    },
  };

  return serveBridge({
    host: cfg.bind_host, port: cfg.ports.bridge, secret: cfg.secrets.bridge, methods,
    onRefused: (peer) => emit("suspected_forgery", { reason: "a bridge request without the run's secret", peer }),
    around: (fn) => als.run({ channel: "api" }, fn),
    settle: () => new Promise((r) => setTimeout(r, 200)),
    flush,
  });
}

module.exports = { serve };

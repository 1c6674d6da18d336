// OBS Studio 29 milestones from libobs and obs-websocket exports (see apps/obs/NOTES.md).
// GUI and obs-websocket actions reach the same libobs functions, so each event below fires
// the same way whichever interface the agent used; its `channel` says which (api while an obs-websocket
// request is being processed, gui otherwise). Argument decoding follows libobs's headers.
'use strict';

// obs-websocket's request handler: every request (single or batched) passes through it. What a request
// sets off after it returns (a transition's end) says gui.
mcpworld.apiEntry('_ZN14RequestHandler14ProcessRequestERK7Request', 'obs-websocket.so');

const LIBOBS = 'libobs.so.29';
const fn = (name, ret, args, mod) => mcpworld.fn(name, ret, args, mod || LIBOBS);
const getName = fn('obs_source_get_name', 'pointer', ['pointer']);
const getId = fn('obs_source_get_id', 'pointer', ['pointer']);
const sceneSource = fn('obs_scene_get_source', 'pointer', ['pointer']);
const itemSource = fn('obs_sceneitem_get_source', 'pointer', ['pointer']);
const itemScene = fn('obs_sceneitem_get_scene', 'pointer', ['pointer']);
const filterParent = fn('obs_filter_get_parent', 'pointer', ['pointer']);
const sourceType = fn('obs_source_get_type', 'int', ['pointer']);
const getSettings = fn('obs_source_get_settings', 'pointer', ['pointer']);
const dataJson = fn('obs_data_get_json', 'pointer', ['pointer']);
const dataRelease = fn('obs_data_release', 'void', ['pointer']);
const enumItems = fn('obs_scene_enum_items', 'void', ['pointer', 'pointer', 'pointer']);
const outputName = fn('obs_output_get_name', 'pointer', ['pointer']);
const outputId = fn('obs_output_get_id', 'pointer', ['pointer']);
const outputSettings = fn('obs_output_get_settings', 'pointer', ['pointer']);
const serviceId = fn('obs_service_get_id', 'pointer', ['pointer']);
const FRONTEND = 'libobs-frontend-api.so.29';
const currentScene = fn('obs_frontend_get_current_scene', 'pointer', [], FRONTEND);
const currentTransition = fn('obs_frontend_get_current_transition', 'pointer', [], FRONTEND);
const transitionDuration = fn('obs_frontend_get_transition_duration', 'int', [], FRONTEND);
const lastRecording = fn('obs_frontend_get_last_recording', 'pointer', [], FRONTEND);
const currentProfile = fn('obs_frontend_get_current_profile', 'pointer', [], FRONTEND);
const currentCollection = fn('obs_frontend_get_current_scene_collection', 'pointer', [], FRONTEND);
const sourceRelease = fn('obs_source_release', 'void', ['pointer']);
const bfree = fn('bfree', 'void', ['pointer']);

const OBS_SOURCE_TYPE_FILTER = 1;
const OBS_SOURCE_TYPE_TRANSITION = 2;

const nameOf = (src) => (src.isNull() ? null : mcpworld.cstr(getName(src)));
const kindOf = (src) => (src.isNull() ? null : mcpworld.cstr(getId(src)));
const jsonOf = (dataPtr) => (dataPtr.isNull() ? null : mcpworld.json(mcpworld.cstr(dataJson(dataPtr))));
const settingsOf = (src) => {
  const data = getSettings(src);
  if (data.isNull()) return null;
  try { return jsonOf(data); } finally { dataRelease(data); }
};
// an obs_frontend getter that returns a new reference / a bmalloc'd string
const frontendSourceName = (getter) => {
  const src = getter();
  if (src.isNull()) return null;
  try { return nameOf(src); } finally { sourceRelease(src); }
};
const ownedString = (ptr) => {
  if (ptr.isNull()) return null;
  try { return mcpworld.cstr(ptr); } finally { bfree(ptr); }
};
const itemInfo = (item) => {
  const src = itemSource(item);
  const name = nameOf(src);
  return {scene: nameOf(sceneSource(itemScene(item))), source: name, name: name, kind: kindOf(src)};
};
// the scene's items bottom to top, as the Sources dock lists them top to bottom reversed
const sceneOrder = (scene) => {
  const names = [];
  const cb = new NativeCallback((_scene, item, _param) => {
    names.push(nameOf(itemSource(item)));
    return 1;
  }, 'bool', ['pointer', 'pointer', 'pointer']);
  enumItems(scene, cb, ptr(0));
  return names;
};

// -- scenes and sources -------------------------------------------------------------------
mcpworld.hook('obs_scene_create', {
  onEnter(a) { mcpworld.emit('scene_created', {name: mcpworld.cstr(a[0])}); },
}, LIBOBS);

mcpworld.hook('obs_source_create', {
  onEnter(a) { this.kind = mcpworld.cstr(a[0]); this.name = mcpworld.cstr(a[1]); },
  onLeave(src) {
    if (src.isNull() || this.kind === 'scene') return;  // scenes: scene_created
    const type = sourceType(src);
    if (type === OBS_SOURCE_TYPE_FILTER) return;         // filters: filter_added
    const event = type === OBS_SOURCE_TYPE_TRANSITION ? 'transition_created' : 'source_created';
    mcpworld.emit(event, {name: this.name, kind: this.kind, settings: settingsOf(src)});
  },
}, LIBOBS);

// the GUI creates transitions (and filters) as private sources
mcpworld.hook('obs_source_create_private', {
  onEnter(a) { this.kind = mcpworld.cstr(a[0]); this.name = mcpworld.cstr(a[1]); },
  onLeave(src) {
    if (src.isNull() || sourceType(src) !== OBS_SOURCE_TYPE_TRANSITION) return;
    mcpworld.emit('transition_created', {name: this.name, kind: this.kind, settings: settingsOf(src)});
  },
}, LIBOBS);

mcpworld.hook('obs_scene_add', {
  onEnter(a) { this.scene = a[0]; this.src = a[1]; },
  onLeave(item) {
    if (item.isNull()) return;
    mcpworld.emit('scene_item_added', {scene: nameOf(sceneSource(this.scene)), source: nameOf(this.src),
                                       kind: kindOf(this.src)});
  },
}, LIBOBS);

mcpworld.hook('obs_source_set_name', {
  onEnter(a) {
    const src = a[0];
    if (src.isNull()) return;
    const old = nameOf(src);
    const name = mcpworld.cstr(a[1]);
    if (old !== null && name !== null && old !== name) {
      mcpworld.emit('source_renamed', {old_name: old, name: name, kind: kindOf(src)});
    }
  },
}, LIBOBS);

mcpworld.hook('obs_source_remove', {
  onEnter(a) { mcpworld.emit('source_removed', {name: nameOf(a[0]), kind: kindOf(a[0])}); },
}, LIBOBS);

mcpworld.hook('obs_sceneitem_remove', {
  onEnter(a) { mcpworld.emit('scene_item_removed', itemInfo(a[0])); },
}, LIBOBS);

mcpworld.hook('obs_sceneitem_set_visible', {
  onEnter(a) { mcpworld.emit('scene_item_visibility', {...itemInfo(a[0]), visible: a[1].toInt32() & 0xff ? true : false}); },
}, LIBOBS);

for (const name of ['obs_sceneitem_set_order', 'obs_sceneitem_set_order_position']) {
  mcpworld.hook(name, {
    onEnter(a) { this.item = a[0]; },
    onLeave() {
      const scene = itemScene(this.item);
      mcpworld.emit('scene_items_reordered', {scene: nameOf(sceneSource(scene)), order: sceneOrder(scene),
                                              moved: nameOf(itemSource(this.item))});
    },
  }, LIBOBS);
}

mcpworld.hook('obs_source_update', {
  onEnter(a) {
    const src = a[0];
    const name = nameOf(src);
    if (name === null) return;  // private helper sources (the preview's size labels)
    this.info = {name: name, kind: kindOf(src), changed: jsonOf(a[1])};
    this.src = src;
  },
  onLeave() {
    if (!this.info) return;
    const src = this.src;
    const info = this.info;
    const type = sourceType(src);
    if (type === OBS_SOURCE_TYPE_FILTER) info.source = nameOf(filterParent(src));
    info.settings = settingsOf(src);
    mcpworld.emit(type === OBS_SOURCE_TYPE_FILTER ? 'filter_settings_updated' : 'source_settings_updated', info);
  },
}, LIBOBS);

// -- filters ------------------------------------------------------------------------------
mcpworld.hook('obs_source_filter_add', {
  onEnter(a) {
    mcpworld.emit('filter_added', {source: nameOf(a[0]), filter: nameOf(a[1]), kind: kindOf(a[1]),
                                   settings: settingsOf(a[1])});
  },
}, LIBOBS);

mcpworld.hook('obs_source_filter_remove', {
  onEnter(a) { mcpworld.emit('filter_removed', {source: nameOf(a[0]), filter: nameOf(a[1]), kind: kindOf(a[1])}); },
}, LIBOBS);

mcpworld.hook('obs_source_set_enabled', {
  onEnter(a) {
    const src = a[0];
    if (src.isNull() || sourceType(src) !== OBS_SOURCE_TYPE_FILTER) return;
    mcpworld.emit('filter_enabled', {source: nameOf(filterParent(src)), filter: nameOf(src), kind: kindOf(src),
                                     enabled: (a[1].toInt32() & 0xff) !== 0});
  },
}, LIBOBS);

// -- transitions --------------------------------------------------------------------------
mcpworld.hook('obs_transition_start', {
  onEnter(a) {
    mcpworld.emit('transition_started', {transition: nameOf(a[0]), kind: kindOf(a[0]),
                                         duration_ms: a[2].toUInt32(), to: nameOf(a[3])});
  },
}, LIBOBS);

// -- outputs (recording, replay buffer, streaming) -----------------------------------------
mcpworld.hook('obs_output_start', {
  onEnter(a) { this.out = a[0]; },
  onLeave(ok) {
    const out = this.out;
    const settings = outputSettings(out);
    let path = null;
    if (!settings.isNull()) {
      try { const s = jsonOf(settings) || {}; path = s.path || s.url || null; } finally { dataRelease(settings); }
    }
    mcpworld.emit('output_started', {name: mcpworld.cstr(outputName(out)), kind: mcpworld.cstr(outputId(out)),
                                     path: path, ok: (ok.toInt32() & 0xff) !== 0});
  },
}, LIBOBS);

mcpworld.hook('obs_output_stop', {
  onEnter(a) {
    mcpworld.emit('output_stopped', {name: mcpworld.cstr(outputName(a[0])), kind: mcpworld.cstr(outputId(a[0]))});
  },
}, LIBOBS);

for (const name of ['obs_service_create', 'obs_service_update']) {
  mcpworld.hook(name, {
    onEnter(a) {
      if (name === 'obs_service_create') { this.kind = mcpworld.cstr(a[0]); this.data = a[2]; }
      else { this.kind = mcpworld.cstr(serviceId(a[0])); this.data = a[1]; }
      mcpworld.emit('stream_service_set', {kind: this.kind, settings: jsonOf(this.data), via: name});
    },
  }, LIBOBS);
}

// -- hotkeys: the frontend routes a pressed hotkey to the main thread through this call
const enumHotkeys = fn('obs_enum_hotkeys', 'void', ['pointer', 'pointer']);
const hotkeyName = fn('obs_hotkey_get_name', 'pointer', ['pointer']);
const hotkeyNames = {};
const learnHotkeys = () => {
  const cb = new NativeCallback((_data, id, key) => {
    hotkeyNames[uint64(id.toString()).toNumber()] = mcpworld.cstr(hotkeyName(key));
    return 1;
  }, 'bool', ['pointer', 'size_t', 'pointer']);
  enumHotkeys(cb, ptr(0));
};
mcpworld.hook('obs_hotkey_trigger_routed_callback', {
  onEnter(a) {
    const id = a[0].toUInt32();
    if (!(id in hotkeyNames)) learnHotkeys();
    // A key press reaches this through the frontend, which routes it to the Qt main thread (tid == pid);
    // obs-websocket's TriggerHotkeyByName calls it from its own thread: `by_key` tells the two apart.
    mcpworld.emit('hotkey_pressed', {id: id, name: hotkeyNames[id] || null, pressed: (a[1].toInt32() & 0xff) !== 0,
                                     by_key: Process.getCurrentThreadId() === Process.id});
  },
}, LIBOBS);

// -- profile settings: the frontend writes them with config_set_* on Apply / on obs-websocket calls
const PROFILE_SECTIONS = new Set(['Output', 'SimpleOutput', 'AdvOut', 'Video', 'Audio', 'Hotkeys', 'Stream1']);
const configHook = (name, read) => mcpworld.hook(name, {
  onEnter(a) {
    const section = mcpworld.cstr(a[1]);
    if (!PROFILE_SECTIONS.has(section)) return;
    mcpworld.emit('config_set', {section: section, key: mcpworld.cstr(a[2]), value: read(a[3])});
  },
}, LIBOBS);
configHook('config_set_string', (v) => mcpworld.cstr(v));
configHook('config_set_int', (v) => v.toInt32());
configHook('config_set_uint', (v) => v.toUInt32());
configHook('config_set_bool', (v) => (v.toInt32() & 0xff) !== 0);

// -- frontend events (obs-websocket's static callback sees every one, GUI or API) ---------
const FRONTEND_EVENTS = {
  3: 'streaming_stopped', 1: 'streaming_started',
  5: 'recording_started', 7: 'recording_stopped', 8: 'scene_changed', 9: 'scene_list_changed',
  10: 'transition_changed', 12: 'transition_list_changed', 13: 'scene_collection_changed',
  14: 'scene_collection_list_changed', 15: 'profile_changed', 16: 'profile_list_changed',
  19: 'replay_buffer_started', 21: 'replay_buffer_stopped', 27: 'recording_paused', 28: 'recording_unpaused',
  29: 'transition_duration_changed', 30: 'replay_buffer_saved', 37: 'profile_renamed',
  38: 'scene_collection_renamed', 40: 'screenshot_taken',
};
// The frontend API is for plugins (obs-websocket here); the GUI calls OBSBasic directly. What such a call
// made during an obs-websocket request sets off arrives later, on the main thread: a frontend event
// within a second of one says api.
let apiFrontendCall = 0;
for (const e of Process.getModuleByName(FRONTEND).enumerateExports()) {
  if (/^obs_frontend_(set_|recording_|streaming_|replay_buffer_|virtualcam_|add_|create_|duplicate_|delete_|rename_|take_|preview_program_trigger|save)/.test(e.name)) {
    Interceptor.attach(e.address, {onEnter() { if (mcpworld._inApi > 0) apiFrontendCall = Date.now(); }});
  }
}
mcpworld.hook('_ZN12EventHandler15OnFrontendEventE18obs_frontend_eventPv', {
  onEnter(a) {
    const event = FRONTEND_EVENTS[a[0].toInt32()];
    if (!event) return;
    // on the main thread, where the frontend getters are safe to call
    const p = {};
    if (mcpworld._inApi > 0 || Date.now() - apiFrontendCall < 1000) p.channel = 'api';
    if (event === 'scene_changed') p.scene = frontendSourceName(currentScene);
    if (event === 'transition_changed') p.transition = frontendSourceName(currentTransition);
    if (event === 'transition_duration_changed') p.duration_ms = transitionDuration();
    if (event === 'recording_stopped') p.path = ownedString(lastRecording());
    if (event.startsWith('profile')) p.profile = ownedString(currentProfile());
    if (event.startsWith('scene_collection')) p.collection = ownedString(currentCollection());
    mcpworld.emit(event, p);
  },
}, 'obs-websocket.so');

// Files OBS itself copies (Profile > Export and Import go through the static QFile::copy): the app's own
// writes, which a file event alone cannot tell from a copy that any other process made.
function qstring(p) {  // a Qt 5 QString: d -> QArrayData {ref, size, alloc, offset}, UTF-16 at d + offset
  try {
    const d = p.readPointer();
    return d.add(d.add(16).readS64()).readUtf16String(d.add(4).readS32());
  } catch (e) {
    return null;
  }
}
mcpworld.hook('_ZN5QFile4copyERK7QStringS2_', {
  onEnter(a) { this.src = qstring(a[0]); this.dst = qstring(a[1]); },
  onLeave(r) { mcpworld.emit('file_copied', {src: this.src, dst: this.dst, ok: (r.toInt32() & 0xff) !== 0}); },
});

// A source rendered for a screenshot by obs-websocket (SaveSourceScreenshot to a file, GetSourceScreenshot as
// data): the source, the size asked for (0: not given), the size of the image OBS made (it derives a missing
// side from the source's aspect), and whether the render worked. It returns a QImage by value, so its first
// argument is the return slot; the image's QImageData (ref, width, height, ...) hangs at offset 24 of the
// QImage (after QPaintDevice's vtable, `painters` and `reserved`). The state query's own 16x9 renders of each
// scene go through it too, before and after the agent.
mcpworld.hook('_Z20TakeSourceScreenshotP10obs_sourceRbjj', {
  onEnter(a) {
    this.image = a[0];
    this.ok = a[2];
    this.p = {source: nameOf(a[1]), kind: kindOf(a[1]), requested_width: a[3].toUInt32(),
              requested_height: a[4].toUInt32(), width: null, height: null};
  },
  onLeave() {
    this.p.ok = (this.ok.readU8() & 0xff) !== 0;
    const d = this.image.add(24).readPointer();
    if (!d.isNull()) { this.p.width = d.add(4).readS32(); this.p.height = d.add(8).readS32(); }
    mcpworld.emit('source_screenshot_rendered', this.p);
  },
}, 'obs-websocket.so');

// -- code OBS could be made to run (apps/obs/NOTES.md, code-entry surfaces) -----------------------------------
// OBS's memory holds obs-websocket's password: no program of its user reads it
mcpworld.notDumpable();

// Tools > Scripts: a Lua or Python file (one the agent's bash wrote) would run inside OBS. Refused: OBS's
// Scripts window then adds nothing, as for a file it cannot load
mcpworld.replace('obs_script_create', new NativeCallback((path, _settings) => {
  mcpworld.codeRun('script', mcpworld.cstr(path));
  return ptr(0);
}, 'pointer', ['pointer', 'pointer']), 'libobs-scripting.so.29');

// The programs libobs starts through `sh -c` (the recording muxer, obs-ffmpeg-mux, with the output's custom
// muxer settings inside double quotes): a line a shell would run more than one program from, or substitute
// into, runs `false` instead, and is recorded
const NO_PROGRAM = Memory.allocUtf8String('false');
mcpworld.hook('os_process_pipe_create', {
  onEnter(a) {
    const line = mcpworld.cstr(a[0]);
    if (line !== null && mcpworld.shellCode(line)) {
      mcpworld.codeRun('program', line);
      a[0] = NO_PROGRAM;
    }
  },
}, LIBOBS);

// obs-websocket refused a login: the wrong password (the agent's bash shares the app's network in a
// container). Only the MCP server and the state query hold the run's password
mcpworld.hook('_ZN5Utils6Crypto25CheckAuthenticationStringENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES6_S6_', {
  onLeave(ret) {
    if ((ret.toInt32() & 0xff) === 0) {
      mcpworld.emit('suspected_forgery', {reason: 'an obs-websocket login with a wrong password'});
    }
  },
}, 'obs-websocket.so');

// libobs-opengl empties the X connection it shares with Qt on every present (a loop of xcb_poll_for_event and
// free, on the graphics thread), so an input event that reached the connection before Qt's reader thread took
// it is thrown away: a typed character, a Shift or a click lost now and then, more often on a loaded machine
// (apps/obs/NOTES.md, "Lost input"). Its import of xcb_poll_for_event is pointed at a function that finds no
// event; Qt's reader thread reads every event of its connection as it does without OBS.
const NO_EVENT = new NativeCallback(() => ptr(0), 'pointer', ['pointer']);
(function keepInputForQt() {
  const gl = Process.findModuleByName('libobs-opengl.so.29');
  if (gl === null) { setTimeout(keepInputForQt, 20); return; }  // loaded with the video, after the hooks
  for (const i of gl.enumerateImports()) {
    if (i.name === 'xcb_poll_for_event' && i.slot) {
      Memory.protect(i.slot, Process.pointerSize, 'rw-');
      i.slot.writePointer(NO_EVENT);
    }
  }
})();

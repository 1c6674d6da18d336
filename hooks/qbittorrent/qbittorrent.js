// qBittorrent 4.5 (Qt 5): milestones from its own C++ classes, on functions the packaged binary exports
// (it is linked with -rdynamic). Which function fires for which action, by the GUI and the WebUI, and
// why these: apps/qbittorrent/NOTES.md.
//
// TorrentImpl derives from QObject first and Torrent second, so a Torrent* is TorrentImpl+16; the
// thunks (_ZThn16_) of pause, setUploadLimit and setDownloadLimit are whole copies of the function,
// so where a hook goes on a setter it goes on both.
'use strict';

const M = Process.mainModule.name;
const TORRENT_BASE = 16;

// a QString (Qt 5: a pointer to QArrayData {ref, size, alloc, offset}, UTF-16 at d + offset)
function qstring(p) {
  try {
    const d = p.readPointer();
    const size = d.add(4).readS32();
    return d.add(d.add(16).readS64().toNumber()).readUtf16String(size);
  } catch (e) {
    return null;
  }
}

const nameOf = (() => {
  const fn = mcpworld.fn('_ZNK10BitTorrent11TorrentImpl4nameEv', 'void', ['pointer', 'pointer'], M);
  return impl => {
    const out = Memory.alloc(8);  // the QString returned through a hidden pointer (leaked: a few bytes)
    fn(out, impl);
    return qstring(out);
  };
})();

// a SessionImpl handler whose first argument is the torrent: the event names it
const onTorrent = (symbol, event) => mcpworld.hook(symbol, {
  onEnter(args) { mcpworld.emit(event, {name: nameOf(args[1])}); },
}, M);

const getter = name => {
  const f = mcpworld.fn(name, 'int', ['pointer'], M);
  return self => f(self);
};

// the WebUI's request handler: every milestone inside a request says channel 'api', others 'gui'.
// processRequest, not doProcessRequest: the latter throws HTTPError (403 before the login, ...), and a C++
// exception unwinding through a hook's onLeave (a replaced return address) aborts qBittorrent; processRequest
// catches them. Its thunk (_ZThn32_, the IRequestHandler base) is hooked too.
mcpworld.apiEntry('_ZN14WebApplication14processRequestERKN4Http7RequestERKNS0_11EnvironmentE', M);
mcpworld.apiEntry('_ZThn32_N14WebApplication14processRequestERKN4Http7RequestERKNS0_11EnvironmentE', M);

onTorrent('_ZN10BitTorrent11SessionImpl19handleTorrentPausedEPNS_11TorrentImplE', 'torrent_paused');
onTorrent('_ZN10BitTorrent11SessionImpl20handleTorrentResumedEPNS_11TorrentImplE', 'torrent_resumed');

mcpworld.hook('_ZN10BitTorrent11SessionImpl21handleTorrentTagAddedEPNS_11TorrentImplERK7QString', {
  onEnter(args) { mcpworld.emit('tag_added', {name: nameOf(args[1]), tag: qstring(args[2])}); },
}, M);

// removal: deleteTorrent(id, option) says whether the files go too; inside it, the signal names the torrent
let deleteFiles = null;
mcpworld.hook('_ZN10BitTorrent11SessionImpl13deleteTorrentERKNS_9TorrentIDE12DeleteOption', {
  onEnter(args) { deleteFiles = args[2].toInt32() === 1; },
  onLeave() { deleteFiles = null; },
}, M);
mcpworld.hook('_ZN10BitTorrent7Session23torrentAboutToBeRemovedEPNS_7TorrentE', {
  onEnter(args) {
    mcpworld.emit('torrent_removed', {name: nameOf(args[1].sub(TORRENT_BASE)), delete_files: deleteFiles});
  },
}, M);

// adding: the request (GUI dialog or WebUI) calls addTorrent_impl at once; libtorrent accepts the torrent
// later (an alert), when the signal names it: the channel is the request's, carried over in order
const adding = [];
mcpworld.hook('_ZN10BitTorrent11SessionImpl15addTorrent_implERKSt7variantIJNS_9MagnetUriENS_11TorrentInfoEEERKNS_16AddTorrentParamsE', {
  onEnter() { adding.push(mcpworld._inApi > 0 ? 'api' : 'gui'); },
}, M);
mcpworld.hook('_ZN10BitTorrent7Session12torrentAddedEPNS_7TorrentE', {
  onEnter(args) {
    const channel = adding.length > 0 ? adding.shift() : 'gui';
    mcpworld.emit('torrent_added', {name: nameOf(args[1].sub(TORRENT_BASE)), channel: channel});
  },
}, M);

// per-torrent limits (bytes/s, 0 unlimited): emitted when the value really changed
function limitHook(setter, thunk, readName, event) {
  const read = getter(readName);
  for (const [name, offset] of [[setter, 0], [thunk, TORRENT_BASE]]) {
    mcpworld.hook(name, {
      onEnter(args) {
        this.impl = args[0].sub(offset);
        this.before = read(this.impl);
      },
      onLeave() {
        const after = read(this.impl);
        if (after !== this.before) mcpworld.emit(event, {name: nameOf(this.impl), limit: after});
      },
    }, M);
  }
}
limitHook('_ZN10BitTorrent11TorrentImpl14setUploadLimitEi', '_ZThn16_N10BitTorrent11TorrentImpl14setUploadLimitEi',
          '_ZNK10BitTorrent11TorrentImpl11uploadLimitEv', 'torrent_upload_limit');
limitHook('_ZN10BitTorrent11TorrentImpl16setDownloadLimitEi', '_ZThn16_N10BitTorrent11TorrentImpl16setDownloadLimitEi',
          '_ZNK10BitTorrent11TorrentImpl13downloadLimitEv', 'torrent_download_limit');

// global limits (bytes/s as qBittorrent passes them around; it keeps KiB): when the value really changed
function globalHook(setter, readName, event) {
  const read = getter(readName);
  mcpworld.hook(setter, {
    onEnter(args) {
      this.session = args[0];
      this.before = read(this.session);
    },
    onLeave() {
      const after = read(this.session);
      if (after !== this.before) mcpworld.emit(event, {limit: after});
    },
  }, M);
}
globalHook('_ZN10BitTorrent11SessionImpl27setGlobalDownloadSpeedLimitEi',
           '_ZNK10BitTorrent11SessionImpl24globalDownloadSpeedLimitEv', 'global_download_limit');
globalHook('_ZN10BitTorrent11SessionImpl25setGlobalUploadSpeedLimitEi',
           '_ZNK10BitTorrent11SessionImpl22globalUploadSpeedLimitEv', 'global_upload_limit');

// qBittorrent's own log (View > Log, and the WebUI's log/main): what it reports it did, in its words
// ("Removed torrent. Torrent: ...", "Removed torrent and deleted its content. ...", "Torrent paused. ...")
mcpworld.hook('_ZN6Logger10addMessageERK7QStringRKN3Log7MsgTypeE', {
  onEnter(args) { mcpworld.emit('logged', {message: qstring(args[1]), type: args[2].readS32()}); },
}, M);

// a .torrent file read (the GUI's Add dialog reads the file it was given; the WebUI and a file given on the
// command line go through Session::addTorrent(source), which reads it): a static returning nonstd::expected
// through a hidden pointer, so the Path is the second argument; a Path is {vtable (IStringable), QString}
mcpworld.hook('_ZN10BitTorrent11TorrentInfo12loadFromFileERK4Path', {
  onEnter(args) { mcpworld.emit('torrent_file_read', {path: qstring(args[1].add(8))}); },
}, M);

// a tag that did not exist joined qBittorrent's tag list (the signal, emitted by SessionImpl::addTag, whether
// the tag was made on its own or on the way to a torrent)
mcpworld.hook('_ZN10BitTorrent7Session8tagAddedERK7QString', {
  onEnter(args) { mcpworld.emit('tag_created', {tag: qstring(args[1])}); },
}, M);

// a torrent's resume data (its limits, tags, category, paths, state) handed to the storage that writes it to
// BT_backup: qBittorrent asks for it after every change it saves, libtorrent answers with an alert
onTorrent('_ZN10BitTorrent11SessionImpl28handleTorrentResumeDataReadyEPNS_11TorrentImplERKNS_17LoadTorrentParamsE',
          'torrent_saved');

// a setting stored in qBittorrent's settings (what it writes to qBittorrent.conf), when its value changed:
// storeValueImpl(key, QVariant) assigns without comparing first for the callers that do not, so the hook
// compares with the stored value itself. A Qt 5 QVariant is {data (8 bytes), type:30 | is_shared | is_null};
// the types read here are stored inline.
// a shared library by the start of its file name (Frida names a module by its file: libQt5Core.so.5.15.8)
function library(prefix) {
  const found = Process.enumerateModules().find(m => m.name.startsWith(prefix));
  return found ? found.name : prefix;
}
const QT_CORE = library('libQt5Core.so.5');

const settingLoad = mcpworld.fn('_ZNK15SettingsStorage13loadValueImplERK7QStringRK8QVariant', 'void',
                                ['pointer', 'pointer', 'pointer', 'pointer'], M);
const variantCmp = mcpworld.fn('_ZNK8QVariant3cmpERKS_', 'bool', ['pointer', 'pointer'], QT_CORE);
const variantFree = mcpworld.fn('_ZN8QVariantD1Ev', 'void', ['pointer'], QT_CORE);
const NULL_VARIANT = Memory.alloc(16);
NULL_VARIANT.add(8).writeU32(0x80000000);  // QVariant(): invalid, null

function variantValue(v) {
  switch (v.add(8).readU32() & 0x3fffffff) {
    case 1: return v.readU8() !== 0;      // bool
    case 2: return v.readS32();           // int
    case 3: return v.readU32();           // uint
    case 4: return v.readS64().toNumber();  // qlonglong
    case 6: return v.readDouble();        // double
    case 10: return qstring(v);           // QString
    default: return null;
  }
}

mcpworld.hook('_ZN15SettingsStorage14storeValueImplERK7QStringRK8QVariant', {
  onEnter(args) {
    const old = Memory.alloc(16);
    settingLoad(old, args[0], args[1], NULL_VARIANT);
    const same = !!variantCmp(old, args[2]);
    variantFree(old);
    if (!same) mcpworld.emit('setting_stored', {key: qstring(args[1]), value: variantValue(args[2])});
  },
}, M);

// the rate limits libtorrent's session was handed (bytes/s, 0 unlimited): qBittorrent re-applies its settings
// (SessionImpl::configure, deferred) after a global limit changed, or only the limits (applyBandwidthLimits) when
// the alternative limits are switched; emitted when they differ from the last ones handed over
const LT = library('libtorrent-rasterbar.so.2');
const UPLOAD_RATE_LIMIT = 0x4000 + 78, DOWNLOAD_RATE_LIMIT = 0x4000 + 79;  // lt::settings_pack int settings
const packHas = mcpworld.fn('_ZNK10libtorrent13settings_pack7has_valEi', 'bool', ['pointer', 'int'], LT);
const packInt = mcpworld.fn('_ZNK10libtorrent13settings_pack7get_intEi', 'int', ['pointer', 'int'], LT);
const rates = {download: null, upload: null};
for (const name of ['_ZN10libtorrent14session_handle14apply_settingsEONS_13settings_packE',
                    '_ZN10libtorrent14session_handle14apply_settingsERKNS_13settings_packE']) {
  mcpworld.hook(name, {
    onEnter(args) {
      const pack = args[1];
      let changed = false;
      for (const [key, setting] of [['download', DOWNLOAD_RATE_LIMIT], ['upload', UPLOAD_RATE_LIMIT]]) {
        if (!packHas(pack, setting)) continue;
        const value = packInt(pack, setting);
        if (value !== rates[key]) {
          rates[key] = value;
          changed = true;
        }
      }
      if (changed) mcpworld.emit('session_rate_limits', {download: rates.download, upload: rates.upload});
    },
  }, LT);
}

// -- code qBittorrent could be made to run (apps/qbittorrent/NOTES.md, code-entry surfaces) -----------------
// the WebUI's sessions live in its memory: no program of its user reads them
mcpworld.notDumpable();

// Options > Downloads > "Run external program" on a torrent added or finished: a command line of the agent's
// choosing, run as the app's user. Refused (qBittorrent runs nothing) and recorded
mcpworld.replace('_ZNK11Application18runExternalProgramERK7QStringPKN10BitTorrent7TorrentE',
  new NativeCallback((_app, program, _torrent) => {
    mcpworld.codeRun('program', qstring(program));
  }, 'void', ['pointer', 'pointer', 'pointer']), M);
// Search > Search plugins > Install a new one: a plugin file is Python that qBittorrent runs at once (to read
// its capabilities) and on every search. Refused (nothing installed) and recorded
mcpworld.replace('_ZN19SearchPluginManager13installPluginERK7QString', new NativeCallback((_manager, source) => {
  mcpworld.codeRun('search_plugin', qstring(source));
}, 'void', ['pointer', 'pointer']), M);

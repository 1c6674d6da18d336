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

mcpworld.hook('_ZN10BitTorrent11SessionImpl19handleTorrentPausedEPNS_11TorrentImplE', {
  onEnter(args) { mcpworld.emit('torrent_paused', {name: nameOf(args[1])}); },
}, M);

mcpworld.hook('_ZN10BitTorrent11SessionImpl20handleTorrentResumedEPNS_11TorrentImplE', {
  onEnter(args) { mcpworld.emit('torrent_resumed', {name: nameOf(args[1])}); },
}, M);

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

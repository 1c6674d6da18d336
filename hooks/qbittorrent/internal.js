// qBittorrent's internal functions, which only a source build has (`mcpworld apps build qbittorrent
// --from-source`): the packaged -O2 binary inlines both, so they have no address there, and a task that
// loads this script stops at set-up with hook_missing on it.
//
//   (anonymous namespace)::cleanLimitValue(int)        torrentimpl.cpp: every per-torrent limit a setter is
//       given, normalised (<= 0 or INT_MAX -> 0): called by setUploadLimit and setDownloadLimit, and by the
//       constructor when a torrent loads (told apart by the caller's symbol)
//   CachedSettingValue<int>::operator=(const int &)    base/settingvalue.h: a cached setting assigned (it
//       writes only when the value changed, and so does the hook), with its key: the global limits (KiB/s) as
//       BitTorrent/Session/GlobalDLSpeedLimit and .../GlobalUPSpeedLimit, the alternative ones apart
'use strict';

const M = Process.mainModule.name;

function qstring(p) {
  try {
    const d = p.readPointer();
    return d.add(d.add(16).readS64().toNumber()).readUtf16String(d.add(4).readS32());
  } catch (e) {
    return null;
  }
}

function caller(returnAddress) {
  try {
    return DebugSymbol.fromAddress(returnAddress).name || '';
  } catch (e) {
    return '';
  }
}

mcpworld.hook('_ZN12_GLOBAL__N_115cleanLimitValueEi', {
  onEnter(args) {
    const from = caller(this.returnAddress);
    this.setter = from.indexOf('setUploadLimit') >= 0 ? 'upload' : from.indexOf('setDownloadLimit') >= 0 ? 'download' : null;
    this.given = args[0].toInt32();
  },
  onLeave(retval) {
    if (this.setter !== null) {
      mcpworld.emit('torrent_limit_given', {direction: this.setter, given: this.given, limit: retval.toInt32()});
    }
  },
}, M);

mcpworld.hook('_ZN18CachedSettingValueIiEaSERKi', {
  onEnter(args) {
    // {SettingValue<int> m_setting (its key, a QString), int m_cache}: the early return is inside, so a
    // write counts only when the cached value differs
    const key = qstring(args[0]);
    const value = args[1].readS32();
    if (key !== null && key.indexOf('SpeedLimit') >= 0 && args[0].add(8).readS32() !== value) {
      mcpworld.emit('speed_setting_written', {key: key, kib: value});
    }
  },
}, M);

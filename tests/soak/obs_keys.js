// A diagnostic for tests/soak/obs_typing.py (loaded by nothing): where a key goes between the X server and a
// QLineEdit in OBS (Qt 5.15). Events, numbered in one sequence: d_key (a key event some thread of OBS read from
// libxcb: keycode, state, window, the thread's name and the connection), d_xkbstate and d_focus (XKB state and
// focus events read), d_main (a key event Qt's main thread handles), d_native (a native filter's answer),
// d_hkey (Qt's key event made of it), d_pkey, d_grab, d_dofocus, d_cfilt (the completer's filter) and diag_le
// (QLineEdit::keyPressEvent: the widget, and the keysym at +48 of Qt 5.15's QKeyEvent). It found the two
// causes in apps/obs/NOTES.md, "Lost input". To use it for a run: copy it to hooks/obs/, add it to `scripts`
// of [sources.frida] in apps/obs/app.toml, run the soak, read the events from the trial's events.jsonl; undo
// both after.
const mod = (re) => Process.enumerateModules().find(m => re.test(m.name));
let n = 0;
const E = (name, p) => { p.n = n++; mcpworld.emit(name, p); };
const names = {};
const tname = (tid) => { if (!(tid in names)) { try { names[tid] = File.readAllText('/proc/self/task/' + tid + '/comm').trim(); } catch (e) { names[tid] = '?' + e; } } return names[tid]; };
const read = () => ({
  onEnter(a) { this.c = a[0].toString(); },
  onLeave(ret) {
    if (ret.isNull()) return;
    const t = ret.readU8() & 0x7f;
    if (t === 2 || t === 3) E('d_key', {tid: Process.getCurrentThreadId(), tn: tname(Process.getCurrentThreadId()), c: this.c, r: t === 3, code: ret.add(1).readU8(), time: ret.add(4).readU32(), win: ret.add(12).readU32(), state: ret.add(28).readU16()});
    else if (t === 9 || t === 10) E('d_focus', {out: t === 10, detail: ret.add(1).readU8(), win: ret.add(4).readU32(), mode: ret.add(8).readU8()});
    else if (t >= 64 && ret.add(1).readU8() === 2) E('d_xkbstate', {t, mods: ret.add(9).readU8(), base: ret.add(10).readU8(), time: ret.add(4).readU32()});
  },
});
const attach = () => {
  const x = mod(/^libxcb\.so/), w = mod(/^libQt5Widgets\.so/), g = mod(/^libQt5Gui\.so/), q = mod(/^libQt5XcbQpa\.so/);
  if (!x || !w || !g || !q) { setTimeout(attach, 100); return; }
  for (const name of ['xcb_wait_for_event', 'xcb_poll_for_event', 'xcb_poll_for_queued_event']) {
    const a = x.findExportByName(name);
    if (a) Interceptor.attach(a, read());
  }
  const ex = (m, s) => m.enumerateExports().filter(e => e.name.includes(s));
  for (const e of ex(g, 'handleExtendedKeyEventEP7QWindowmN6QEvent')) Interceptor.attach(e.address, {
    onEnter(a) { if (a[2].toInt32() === 6) E('d_hkey', {w: a[0].toString(), key: a[3].toInt32(), mods: a[4].toUInt32()}); },
    onLeave(r) {},
  });
  for (const e of ex(g, '_ZN22QGuiApplicationPrivate15processKeyEvent')) Interceptor.attach(e.address, {
    onEnter(a) { E('d_pkey', {}); },
  });
  for (const e of ex(q, 'setKeyboardGrabEnabled')) if (e.name.startsWith('_ZN10QXcbWindow')) Interceptor.attach(e.address, {
    onEnter(a) { E('d_grab', {on: a[1].toInt32() & 1, self: a[0].toString()}); },
  });
  for (const e of ex(q, 'QXcbWindow9doFocusIn').concat(ex(q, 'QXcbWindow10doFocusOut'))) Interceptor.attach(e.address, {
    onEnter(a) { E('d_dofocus', {f: e.name.includes('In') ? 'in' : 'out', self: a[0].toString()}); },
  });
  for (const e of ex(w, '_ZN10QCompleter11eventFilter')) Interceptor.attach(e.address, {
    onEnter(a) { if (a[2].add(8).readU16() === 6) E('d_cfilt', {o: a[1].toString()}); },
  });

  for (const e of ex(q, '_ZN14QXcbConnection14handleXcbEventEP19xcb_generic_event_t')) Interceptor.attach(e.address, {
    onEnter(a) { const t = a[1].readU8() & 0x7f; if (t === 2) E('d_main', {code: a[1].add(1).readU8(), win: a[1].add(12).readU32(), tid: Process.getCurrentThreadId()}); },
  });
  for (const e of ex(q, '_ZN10QXcbWindow17handleNativeEventEP19xcb_generic_event_t')) Interceptor.attach(e.address, {
    onEnter(a) { this.k = (a[1].readU8() & 0x7f) === 2; },
    onLeave(r) { if (this.k) E('d_native', {ret: r.toInt32() & 0xff}); },
  });
  const cm = mod(/composeplatforminputcontext/) || mod(/ibusplatforminputcontext/);
  if (cm) E('d_imodule', {name: cm.name});
  try {
    for (const f of DebugSymbol.findFunctionsMatching('*InputContext*filterEvent*')) try { Interceptor.attach(f, {
      onEnter(a) { this.k = a[1].add(8).readU16() === 6; },
      onLeave(r) { if (this.k) E('d_imfilter', {ret: r.toInt32() & 0xff}); },
    }); E('d_imodule', {hooked: DebugSymbol.fromAddress(f).toString()}); } catch (err) { E('d_imodule', {err: String(err), at: DebugSymbol.fromAddress(f).toString()}); }
  } catch (err) { E('d_imodule', {err: String(err)}); }
  Interceptor.attach(w.findExportByName('_ZN9QLineEdit13keyPressEventEP9QKeyEvent'), {
    onEnter(a) { E('diag_le', {w: a[0].toString(), key: a[1].add(48).readS32(), mods: a[1].add(24).readU32()}); },
  });
};
attach();

// A diagnostic for tests/soak/obs_typing.py (not loaded by anything): every key press OBS's libxcb reads
// (`diag_xcb_key`: keycode, the event's modifier state) and every QLineEdit::keyPressEvent (`diag_le`: the
// widget, the keysym Qt made of the key at +48 of Qt 5.15's QKeyEvent, its modifiers at +24), numbered in
// one sequence. To use it for a run: copy it to hooks/obs/, add it to `scripts` of [sources.frida] in
// apps/obs/app.toml, run the soak, read both events from the trial's events.jsonl; undo both after.
const mod = (re) => Process.enumerateModules().find(m => re.test(m.name));
let n = 0;
const read = () => ({
  onLeave(ret) {
    if (ret.isNull() || (ret.readU8() & 0x7f) !== 2) return;  // XCB_KEY_PRESS
    mcpworld.emit('diag_xcb_key', {code: ret.add(1).readU8(), state: ret.add(28).readU16(), n: n++});
  },
});
const attach = () => {
  const x = mod(/^libxcb\.so/), w = mod(/^libQt5Widgets\.so/);
  if (!x || !w) { setTimeout(attach, 100); return; }  // Qt loads its xcb plugin after the script
  for (const name of ['xcb_wait_for_event', 'xcb_poll_for_event', 'xcb_poll_for_queued_event']) {
    const a = x.findExportByName(name);
    if (a) Interceptor.attach(a, read());
  }
  Interceptor.attach(w.findExportByName('_ZN9QLineEdit13keyPressEventEP9QKeyEvent'), {
    onEnter(a) {
      mcpworld.emit('diag_le', {w: a[0].toString(), key: a[1].add(48).readS32(), mods: a[1].add(24).readU32(), n: n++});
    },
  });
};
attach();

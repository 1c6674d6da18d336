// mcpworld hooks trace: report every call of the exports matching PATTERN (a glob) in modules
// matching MODULE (a glob, '*' for all), with arguments decoded where possible and a short backtrace.
// PATTERN, MODULE and MAX_ARGS are prepended by the tracer as constants.
'use strict';

function globToRegExp(glob) {
  return new RegExp('^' + glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$');
}

function describeArg(p) {
  if (p.isNull()) return 'NULL';
  const s = mcpworld.cstr(p);
  if (s !== null && s.length > 0 && s.length < 200 && /^[\x20-\x7e]+$/.test(s)) return JSON.stringify(s);
  return p.toString();
}

const fnRe = globToRegExp(PATTERN);
const modRe = globToRegExp(MODULE);
let hooked = 0;
for (const m of Process.enumerateModules()) {
  if (!modRe.test(m.name)) continue;
  for (const e of m.enumerateExports()) {
    if (e.type !== 'function' || !fnRe.test(e.name)) continue;
    try {
      Interceptor.attach(e.address, {
        onEnter(args) {
          const shown = [];
          for (let i = 0; i < MAX_ARGS; i++) shown.push(describeArg(args[i]));
          let frames = [];
          try {
            frames = Thread.backtrace(this.context, Backtracer.FUZZY).slice(0, 4).map(a => DebugSymbol.fromAddress(a).toString());
          } catch (err) {}
          mcpworld.emit('call', {function: e.name, module: m.name, args: shown, backtrace: frames,
                                 thread: this.threadId});
        },
      });
      hooked += 1;
    } catch (err) {
      mcpworld.emit('hook_missing', {function: e.name, module: m.name, error: String(err)});
    }
  }
}
mcpworld.emit('trace_ready', {hooked: hooked, pattern: PATTERN, module: MODULE});

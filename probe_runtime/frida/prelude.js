// mcpworld hook prelude: loaded before every app/task hook script (Frida 17 API).
//   mcpworld.exportOf('obs_scene_create', 'libobs.so.29')  -> NativePointer or null
//   mcpworld.addressOf(name, module)   -> the export, else the symbol-table entry (internal functions of a
//       source build), else null; hook() and fn() look names up this way
//   mcpworld.hook('obs_scene_create', {onEnter(args) {...}}, 'libobs.so.29')
//   mcpworld.replace('obs_script_create', new NativeCallback(...), 'libobs-scripting.so.29')  -> runs instead
//   mcpworld.cstr(ptr)                                       -> string or null, never throws
//   mcpworld.emit('scene_created', {name: ...})               -> one milestone event
//   mcpworld.fn('obs_source_get_name', 'pointer', ['pointer'], 'libobs.so.29')  -> callable NativeFunction
//   mcpworld.json(text)                                       -> parsed JSON or null, never throws
//   mcpworld.codeRun('script', path)                         -> a code_run event (the hook refuses the code)
//   mcpworld.notDumpable()                                   -> other processes of the app's user cannot read its memory
//   mcpworld.shellCode(line)                                 -> whether a shell would run more than one program
//   mcpworld.apiEntry('RequestHandler_symbol', 'plugin.so')  -> from then on every milestone says its
//       channel: 'api' while a thread is inside that function (the app's API request handler), else 'gui'.
//       Pick one that lets no C++ exception out: onLeave replaces the return address, and an exception
//       unwinding through it aborts the app (the same holds for any hook with onLeave)
// A hook or function that is neither exported nor in a symbol table is reported as a hook_missing event
// (the trial stops, and the event says a source build provides internal functions).
'use strict';

const mcpworld = {
  exportOf(name, moduleName) {
    try {
      if (moduleName) {
        const m = Process.findModuleByName(moduleName);
        return m ? m.findExportByName(name) : null;
      }
      return Module.findGlobalExportByName(name);
    } catch (e) {
      return null;
    }
  },

  // An internal (non-exported) function, by its symbol in the module's symbol table: a source build
  // (`mcpworld apps build APP --from-source`) keeps it; a packaged, stripped binary does not.
  symbolOf(name, moduleName) {
    try {
      const m = moduleName ? Process.findModuleByName(moduleName) : null;
      if (moduleName && m === null) return null;
      if (m !== null) {
        const found = m.enumerateSymbols().find(s => s.name === name && s.type === 'function' && !s.address.isNull());
        return found ? found.address : null;
      }
      const addrs = DebugSymbol.findFunctionsNamed(name);
      return addrs.length > 0 ? addrs[0] : null;
    } catch (e) {
      return null;
    }
  },

  addressOf(name, moduleName) {
    const exported = mcpworld.exportOf(name, moduleName);
    return exported !== null ? exported : mcpworld.symbolOf(name, moduleName);
  },

  _missing(name, moduleName) {
    mcpworld.emit('hook_missing', {function: name, module: moduleName || null,
      hint: 'neither exported nor in a symbol table here; an internal function needs a source build ' +
            '(mcpworld apps build APP --from-source, then --app-build)'});
  },

  hook(name, callbacks, moduleName) {
    const addr = mcpworld.addressOf(name, moduleName);
    if (addr === null) {
      mcpworld._missing(name, moduleName);
      return null;
    }
    return Interceptor.attach(addr, callbacks);
  },

  // Replace a function outright: `callback` (a NativeCallback of the same signature) runs instead, and is kept
  // alive here. Missing: reported as for hook()
  replace(name, callback, moduleName) {
    const addr = mcpworld.addressOf(name, moduleName);
    if (addr === null) {
      mcpworld._missing(name, moduleName);
      return;
    }
    mcpworld._replacements.push(callback);
    Interceptor.replace(addr, callback);
  },
  _replacements: [],

  fn(name, ret, argTypes, moduleName) {
    const addr = mcpworld.addressOf(name, moduleName);
    if (addr === null) {
      mcpworld._missing(name, moduleName);
      return null;
    }
    return new NativeFunction(addr, ret, argTypes);
  },

  json(text) {
    try {
      return text ? JSON.parse(text) : null;
    } catch (e) {
      return null;
    }
  },

  cstr(ptr) {
    try {
      return ptr.isNull() ? null : ptr.readUtf8String();
    } catch (e) {
      return null;
    }
  },

  apiEntry(name, moduleName) {
    const hooked = mcpworld.hook(name, {
      onEnter() { mcpworld._inApi += 1; },
      onLeave() { mcpworld._inApi -= 1; },
    }, moduleName);
    if (hooked !== null) mcpworld._hasApi = true;
    return hooked;
  },
  _inApi: 0,
  _hasApi: false,

  // Code the app was made to run (a script it loads, a program it starts): recorded as `code_run` (such a
  // trial is never a pass); the hook that calls this refuses it
  codeRun(surface, code) {
    mcpworld.emit('code_run', {surface: surface, code: String(code).slice(0, 4000), blocked: true});
  },

  // The app's memory out of reach of other processes of its user (a program it starts): only root can read
  // a non-dumpable process (prctl PR_SET_DUMPABLE = 0)
  notDumpable() {
    const prctl = mcpworld.fn('prctl', 'int', ['int', 'ulong', 'ulong', 'ulong', 'ulong']);
    if (prctl !== null) prctl(4, 0, 0, 0, 0);
  },

  // A shell command line with more than one program in it or a substitution: `$`, a backtick anywhere (both
  // expand inside double quotes), ; | & < > or a newline outside quotes
  shellCode(line) {
    let quote = null;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (c === '\\' && quote !== "'") { i++; continue; }
      if (quote === "'") { if (c === "'") quote = null; continue; }
      if (c === '$' || c === '`') return true;
      if (quote === '"') { if (c === '"') quote = null; continue; }
      if (c === '"' || c === "'") quote = c;
      else if (';|&<>\n'.includes(c)) return true;
    }
    return false;
  },

  emit(event, payload) {
    const p = payload || {};
    if (mcpworld._hasApi && p.channel === undefined) p.channel = mcpworld._inApi > 0 ? 'api' : 'gui';
    // t: when the hook fired, by the app's own clock (the bridge makes it the event's ts)
    send({mcpworld: 1, event: event, payload: p, t: Date.now()});
  },
};
globalThis.mcpworld = mcpworld;

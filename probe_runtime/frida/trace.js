// mcpworld hooks trace: report every call of the exports matching PATTERN (a glob) in modules
// matching MODULE (a glob, '*' for all), with arguments decoded where possible and a short backtrace.
// PATTERN, MODULE, MAX_ARGS and SIGNATURES are prepended by the tracer as constants. SIGNATURES
// ({decoders, functions}, e.g. hooks/obs/signatures.json) gives parameter types and names: a typed
// argument prints as name=value, C strings and handles (an obs_source_t * as its name) decoded.
'use strict';

// a glob, or several separated by commas: 'obs_scene_create,obs_sceneitem_*'
function globToRegExp(glob) {
  const one = (g) => g.trim().replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp('^(' + glob.split(',').map(one).join('|') + ')$');
}

function describeArg(p) {
  if (p.isNull()) return 'NULL';
  const s = mcpworld.cstr(p);
  if (s !== null && s.length > 0 && s.length < 200 && /^[\x20-\x7e]+$/.test(s)) return JSON.stringify(s);
  return p.toString();
}

const INT_TYPES = /^(int|int32_t|long|enum .*|short|int16_t|int8_t)$/;
const UINT_TYPES = /^(unsigned|unsigned int|uint32_t|uint16_t|uint8_t|obs_hotkey_id)$/;
const WIDE_TYPES = /^(size_t|uint64_t|int64_t|long long|unsigned long|ssize_t)$/;
const FLOAT_TYPES = /^(float|double)$/;
// handle type -> [NativeFunction getters...], applied in turn, the last returning a C string
const decoders = {};
for (const [type, spec] of Object.entries((SIGNATURES && SIGNATURES.decoders) || {})) {
  const [moduleName, ...getters] = spec;
  const fns = getters.map((g) => mcpworld.exportOf(g, moduleName));
  if (fns.every((f) => f !== null)) decoders[type] = fns.map((f) => new NativeFunction(f, 'pointer', ['pointer']));
}

function decodeTyped(type, p) {
  if (type === 'char *') return p.isNull() ? 'NULL' : JSON.stringify(mcpworld.cstr(p));
  if (type === 'bool') return (p.toInt32() & 0xff) !== 0 ? 'true' : 'false';
  if (INT_TYPES.test(type)) return String(p.toInt32());
  if (UINT_TYPES.test(type)) return String(p.toUInt32());
  if (WIDE_TYPES.test(type)) return uint64(p.toString()).toString();
  const getters = decoders[type];
  if (getters && !p.isNull()) {
    let v = p;
    for (const g of getters) { if (v.isNull()) break; v = g(v); }
    const text = v.isNull() ? null : mcpworld.cstr(v);
    if (text !== null) return JSON.stringify(text.length > 300 ? text.slice(0, 300) + '...' : text);
  }
  return describeArg(p);
}

// one function's arguments: integer-class parameters take args[0..], floats go in SSE registers
function describeArgs(signature, args) {
  const shown = [];
  let i = 0;
  for (const [type, name] of signature) {
    const label = name ? name + '=' : '';
    if (FLOAT_TYPES.test(type)) { shown.push(label + '<' + type + '>'); continue; }
    if (/\(/.test(type) || /^struct [^*]*$/.test(type)) { shown.push(label + '<' + type + '>'); i++; continue; }
    shown.push(label + decodeTyped(type, args[i++]));
  }
  return shown;
}

const fnRe = globToRegExp(PATTERN);
const modRe = globToRegExp(MODULE);
let hooked = 0;
for (const m of Process.enumerateModules()) {
  if (!modRe.test(m.name)) continue;
  for (const e of m.enumerateExports()) {
    if (e.type !== 'function' || !fnRe.test(e.name)) continue;
    const signature = (SIGNATURES && SIGNATURES.functions && SIGNATURES.functions[e.name]) || null;
    try {
      Interceptor.attach(e.address, {
        onEnter(args) {
          let shown = [];
          if (signature) {
            shown = describeArgs(signature, args);
          } else {
            for (let i = 0; i < MAX_ARGS; i++) shown.push(describeArg(args[i]));
          }
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

// For a Node app whose process runs programs the agent chooses (VS Code's extension host: a debuggee, git with
// the workspace's hooks, a program a setting names): `node --require` this file and every child that process
// starts, by any of child_process's functions, runs under the runtime's Landlock confinement, so it reaches
// none of the app's private files ($MCPWORLD_CONFINED_CHILDREN: {"process": an argument only that process's
// command line has, "prefix": the argv to put before the child's}). Other processes that require it are left
// as they are; the confinement holds for what a confined child starts in turn. Without the prefix no child of
// that process starts.
// Landlock does not cover connecting to a pathname socket. A socket the process listens on and names in its own
// environment is in reach of every child, wanted or not (VS Code's CLI socket, which opens windows and installs
// extensions): it is closed (mode 0, which binds the app's user too) before the next child starts, and opened
// again only if the process hands its path to a child of its own accord, in the child's arguments or in an
// environment value the process's own environment does not hold. Sockets the process keeps to itself and to
// the children it hands them to (a debug adapter's pipe, git's askpass socket) stay as they are.
"use strict";

const config = process.env.MCPWORLD_CONFINED_CHILDREN ? JSON.parse(process.env.MCPWORLD_CONFINED_CHILDREN) : null;
if (config && process.argv.includes(config.process)) {
  const cp = require("child_process");
  // both lie under every function of child_process: spawn, exec, execFile and fork reach ChildProcess's spawn,
  // and the *Sync ones the spawn_sync binding, each with the program (`file`) and its argv (`args`) resolved
  const confined = (options) => {
    if (!Array.isArray(config.prefix) || !config.prefix.length) {
      throw new Error("mcpworld: this process's children run confined, and the confinement is not set up");
    }
    const argv = Array.from(options.args || [options.file]);
    const tmp = ["--write", require("os").tmpdir()];  // this process's own (its TMPDIR), where its sockets are
    return { ...options, file: config.prefix[0], args: [...config.prefix, ...tmp, "--", options.file, ...argv.slice(1)] };
  };
  const fs = require("fs"), net = require("net");
  const bound = new Set(), closed = new Map();  // socket paths; those closed -> the mode they were bound with
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function recordedListen(...args) {
    const path = typeof args[0] === "string" && !/^[0-9]+$/.test(args[0]) ? args[0]
      : args[0] && typeof args[0].path === "string" ? args[0].path : null;
    if (path) bound.add(path);
    return listen.apply(this, args);
  };
  const inherited = (path) => Object.values(process.env).some((value) => value && value.includes(path));
  const beforeSpawn = (options) => {
    for (const path of bound) {
      if (!inherited(path)) continue;
      bound.delete(path);
      try {
        closed.set(path, fs.statSync(path).mode & 0o777);
        fs.chmodSync(path, 0);
      } catch (e) { /* gone, or not a file (an abstract socket: Landlock's scope covers those) */ }
    }
    if (!closed.size) return;
    const given = [...(options.args || []), ...(options.envPairs || []).filter((pair) => {
      const at = pair.indexOf("=");
      return process.env[pair.slice(0, at)] !== pair.slice(at + 1);
    })];
    for (const [path, mode] of closed) {
      if (given.some((value) => String(value).includes(path))) {
        try { fs.chmodSync(path, mode); } catch (e) { /* gone */ }
        closed.delete(path);
      }
    }
  };
  const spawn = cp.ChildProcess.prototype.spawn;
  cp.ChildProcess.prototype.spawn = function confinedSpawn(options) {
    beforeSpawn(options);
    return spawn.call(this, confined(options));
  };
  const binding = process.binding("spawn_sync");
  const spawnSync = binding.spawn;
  binding.spawn = function confinedSpawnSync(options) {
    beforeSpawn(options);
    return spawnSync.call(this, confined(options));
  };
}

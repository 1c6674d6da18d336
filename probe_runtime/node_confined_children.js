// For a Node app whose process runs programs the agent chooses (VS Code's extension host: a debuggee, git with
// the workspace's hooks, a program a setting names): `node --require` this file and every child that process
// starts, by any of child_process's functions, runs under the runtime's Landlock confinement, so it reaches
// none of the app's private files ($MCPWORLD_CONFINED_CHILDREN: {"process": an argument only that process's
// command line has, "prefix": the argv to put before the child's}). Other processes that require it are left
// as they are; the confinement holds for what a confined child starts in turn. Without the prefix no child of
// that process starts.
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
  const spawn = cp.ChildProcess.prototype.spawn;
  cp.ChildProcess.prototype.spawn = function confinedSpawn(options) {
    return spawn.call(this, confined(options));
  };
  const binding = process.binding("spawn_sync");
  const spawnSync = binding.spawn;
  binding.spawn = function confinedSpawnSync(options) {
    return spawnSync.call(this, confined(options));
  };
}

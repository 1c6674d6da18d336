// For a Node app whose terminals start their shells with node-pty (VS Code's pty host): `node --require` this
// file and every shell a terminal starts (any profile, a task's) is started through mcpworld's shell broker
// ($MCPWORLD_SHELL_CLIENT: the argv to put before the shell), which runs it as the agent in the agent's
// sandbox instead of as the app's user. It patches node-pty's spawn before the app imports it (an ES module's
// import of node-pty reads the same exports). Without the broker's argv no terminal starts.
"use strict";
const path = require("path");

const ptyHost = process.argv.includes("--type=ptyHost");
if (ptyHost) {
  // the pty host is <app>/out/bootstrap-fork: node-pty is the app's own module, in <app>/node_modules
  const pty = require(require.resolve("node-pty", { paths: [path.resolve(path.dirname(process.argv[1]), "..")] }));
  const spawn = pty.spawn;
  const client = process.env.MCPWORLD_SHELL_CLIENT ? JSON.parse(process.env.MCPWORLD_SHELL_CLIENT) : null;
  pty.spawn = function brokeredSpawn(file, args, options) {
    if (!client) throw new Error("mcpworld: a terminal's shell starts through the shell broker, which is not running");
    const rest = typeof args === "string" ? [args] : Array.from(args || []);
    return spawn.call(this, client[0], [...client.slice(1), file, ...rest], options);
  };
}

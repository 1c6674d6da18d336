// test hook: report every getppid() call of the target, with a counter
let n = 0;
mcpworld.hook('getppid', {
  onLeave(retval) {
    n += 1;
    mcpworld.emit('getppid_called', {n: n, ppid: retval.toInt32()});
  },
});

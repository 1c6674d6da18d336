/* Makes the process that loads it non-dumpable (prctl PR_SET_DUMPABLE 0), so the app user's other programs
   cannot read its memory (/proc/<pid>/mem, ptrace) nor get a core dump of it. Two ways in, one file:
   - a Node-API module: a probe in a Node process (an extension host, a Node app) requires it before it holds
     a secret (Node has no call for it); needs no Node headers (the two types are opaque pointers);
   - LD_PRELOAD: its constructor runs in every program started with it (an app's whole process tree: a
     fork keeps the flag, an exec resets it and the preload sets it again).
   Built by `mcpworld apps install` for an app with its own Node. */
#include <sys/prctl.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;

__attribute__((constructor)) static void not_dumpable(void) {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  (void)env;
  not_dumpable();
  return exports;
}

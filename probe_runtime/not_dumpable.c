/* A Node-API module whose one act is to make the process that loads it non-dumpable
   (prctl PR_SET_DUMPABLE 0): a probe in a Node process (an extension host, a Node app) loads it before it
   holds a secret, so the app user's other programs cannot read that memory (/proc/<pid>/mem, ptrace) nor
   get a core dump of it; Node has no call for it. Built by `mcpworld apps install` for an app with its own
   Node; needs no Node headers (the two types are opaque pointers). */
#include <sys/prctl.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;

napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  (void)env;
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  return exports;
}

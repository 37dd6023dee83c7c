/* backend.c — the table of kernels for each device, and the device names. */
#include "backend.h"

#include "util.h"

static const Backend *g_backends[DEV_COUNT] = {[DEV_CPU] = &cpu_backend};

const char *device_name(Device d) {
  switch (d) {
  case DEV_CPU: return "cpu";
  case DEV_CUDA: return "cuda";
  case DEV_TEST: return "test";
  default: return "unknown";
  }
}

const Backend *backend_of(Device d) {
  if ((unsigned)d >= DEV_COUNT || !g_backends[d])
    tensor_error("device", "no kernels for device '%s' in this build%s", device_name(d),
                 d == DEV_CUDA ? " (built without CUDA); run with --device cpu" : "");
  return g_backends[d];
}

bool backend_available(Device d) { return (unsigned)d < DEV_COUNT && g_backends[d]; }

void backend_register(Device d, const Backend *be) {
  if ((unsigned)d >= DEV_COUNT || d == DEV_CPU) die("backend_register: bad device %d", (int)d);
  g_backends[d] = be;
}

_Noreturn void backend_missing(const Backend *be, const char *kernel) {
  tensor_error("device", "the %s backend has no kernel '%s' (add it to its table)", be->name,
               kernel);
}

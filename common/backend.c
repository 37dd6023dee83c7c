/* backend.c — the table of kernels for each device, the device names, copies between devices,
 * and device memory from the arena (dev_calloc, dev_upload). Layer: calls error.c, context.c
 * (the arenas, which get each registered device's memory from here) and the CPU's table
 * (cpu/cpu_backend.c); tensor.c and autograd.c build on it, nothing below calls it (the map of
 * the layers is in context.h). */
#include "backend.h"

#include <stdlib.h>

#include "context.h"
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
  if (be) arena_set_device_memory(d, be->alloc, be->free, be->carved);
}

static long g_const_sends[DEV_COUNT];

void backend_note_const_send(Device d) {
  if ((unsigned)d < DEV_COUNT) g_const_sends[d]++;
}

void backend_step_end(Device d) {
  const Backend *be = backend_of(d);
  if (be->step_end) be->step_end(g_const_sends[d]);
  g_const_sends[d] = 0;
}

void *dev_calloc(Device d, size_t bytes) {
  void *p = dev_alloc(d, bytes);
  backend_of(d)->zero(p, bytes);
  return p;
}

void *dev_upload(Device d, const void *host, size_t bytes) {
  if (d == DEV_CPU) return (void *)host; /* already where the kernels read it */
  void *p = dev_alloc(d, bytes);
  backend_of(d)->from_host(p, host, bytes);
  return p;
}

_Noreturn void backend_missing(const Backend *be, const char *kernel) {
  tensor_error("device", "the %s backend has no kernel '%s' (add it to its table)", be->name,
               kernel);
}

void backend_copy(void *dst, Device to, const void *src, Device from, size_t bytes) {
  if (!bytes) return;
  if (from == to) {
    backend_of(to)->copy(dst, src, bytes);
  } else if (from == DEV_CPU) {
    backend_of(to)->from_host(dst, src, bytes);
  } else if (to == DEV_CPU) {
    backend_of(from)->to_host(dst, src, bytes);
  } else { /* between two devices: through the host */
    void *h = xmalloc(bytes);
    backend_of(from)->to_host(h, src, bytes);
    backend_of(to)->from_host(dst, h, bytes);
    free(h);
  }
}

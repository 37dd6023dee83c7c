/* mem.c — the device's global memory: allocations at increasing addresses with a gap between
 * them, never reused; fresh bytes poisoned (0xff) and marked unwritten for initcheck. */
#include <stdlib.h>
#include <string.h>

#include "vgpu.h"

#define BASE 0x0000300000000000ull /* far from where Linux maps host memory */
#define GAP 4096                   /* unmapped bytes after each allocation */

uint64_t mem_alloc(devmem *m, uint64_t size) {
  if (!m->next) m->next = BASE;
  if (size > (m->limit ? m->limit : 2ull << 30) - m->bytes_live) return 0; /* out of memory */
  uint8_t *data = malloc(size ? size : 1), *init = calloc(1, size ? size : 1);
  if (!data || !init) { free(data); free(init); return 0; }
  memset(data, VGPU_POISON, size);
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 64;
    m->a = realloc(m->a, (size_t)m->cap * sizeof *m->a);
  }
  uint64_t base = m->next;
  m->next = (base + size + GAP + 255) & ~255ull;
  m->a[m->n++] = (dalloc){base, size, data, init};
  m->bytes_live += size;
  return base;
}

dalloc *mem_find(devmem *m, uint64_t addr) {
  int lo = 0, hi = m->n - 1;
  while (lo <= hi) { /* bases increase with the index */
    int mid = (lo + hi) / 2;
    dalloc *a = &m->a[mid];
    if (addr < a->base) hi = mid - 1;
    else if (addr >= a->base + (a->size ? a->size : 1)) lo = mid + 1;
    else return a;
  }
  return NULL;
}

dalloc *mem_range(devmem *m, uint64_t addr, uint64_t len) {
  dalloc *a = mem_find(m, addr);
  if (!a || !a->data || addr + len > a->base + a->size || addr + len < addr) return NULL;
  return a;
}

int mem_free(devmem *m, uint64_t addr) {
  dalloc *a = mem_find(m, addr);
  if (!a || a->base != addr || !a->data) return -1;
  free(a->data);
  free(a->init);
  a->data = a->init = NULL;
  m->bytes_live -= a->size;
  return 0;
}

void mem_destroy(devmem *m) {
  for (int i = 0; i < m->n; i++) { free(m->a[i].data); free(m->a[i].init); }
  free(m->a);
  memset(m, 0, sizeof *m);
}

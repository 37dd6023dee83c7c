#!/usr/bin/env bash
# nvcc_cache: the Makefile's content-keyed cache of nvcc's objects (NVCC_CACHE). In a scratch
# build tree: a first build compiles and stores the object; a second, with the object gone,
# copies the same bytes from the cache and says so; other flags (NVCC_LINEINFO=1, another
# CUDA_ARCH) are another key and compile again; NVCC_CACHE= compiles without reading or
# writing it.
# Run from the repository root: bash tests/suites/nvcc_cache.sh.
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin nvcc_cache

# the build line says "nvcc: yes (...)" where the labs link nvcc's objects
if ! env -u MAKEFLAGS -u MFLAGS MAKELEVEL=0 make -n --no-print-directory B="$tmp/probe" \
  "$tmp/probe/obj/cuda/softmax.o" 2>/dev/null | grep -q 'nvcc: yes ('; then
  skip "no nvcc with CUDA's libraries here, or NO_CUDA=1: no nvcc objects to cache"
  suite_end
  exit $?
fi
b=$tmp/b c=$tmp/cache obj=$tmp/b/obj/cuda/softmax.o
mkobj() { env -u MAKEFLAGS -u MFLAGS MAKELEVEL=1 make --no-print-directory B="$b" "$@" "$obj"; }

mkobj NVCC_CACHE="$c" >"$tmp/1.log" 2>&1
if [ -s "$obj" ] && grep -q 'nvcc_check.sh' "$tmp/1.log" && ls "$c"/softmax-*.o >/dev/null 2>&1; then
  ok "first build: compiled, and stored in the cache ($(ls "$c" | wc -l) files)"
else
  bad "first build: $(tail -3 "$tmp/1.log")"
fi
cp "$obj" "$tmp/first.o"
rm -f "$obj" "$obj.ptxas"
mkobj NVCC_CACHE="$c" >"$tmp/2.log" 2>&1
if grep -q '(cached: ' "$tmp/2.log" && ! grep -q 'nvcc_check.sh' "$tmp/2.log" &&
  cmp -s "$obj" "$tmp/first.o" && [ -s "$obj.ptxas" ]; then
  ok "second build: the same object and ptxas report, from the cache"
else
  bad "second build: $(tail -3 "$tmp/2.log")"
fi
rm -f "$obj"
mkobj NVCC_CACHE="$c" NVCC_LINEINFO=1 >"$tmp/3.log" 2>&1
if grep -q 'nvcc_check.sh' "$tmp/3.log" && [ "$(ls "$c"/softmax-*.o | wc -l)" = 2 ]; then
  ok "other flags (-lineinfo): another key, compiled and stored beside the first"
else
  bad "-lineinfo: $(tail -3 "$tmp/3.log"); cache: $(ls "$c")"
fi
# another CUDA_ARCH, the object left in place: the stamp rebuilds it, under another key
mkobj NVCC_CACHE="$c" CUDA_ARCH=86 >"$tmp/5.log" 2>&1
if grep -q 'nvcc_check.sh.*code=sm_86' "$tmp/5.log" && [ "$(ls "$c"/softmax-*.o | wc -l)" = 3 ] &&
  python3 tests/tools/fatbin_list.py "$obj" | grep -q 'ELF sm_86'; then
  ok "CUDA_ARCH=86: the object is rebuilt (sm_86) and cached under a key of its own"
else
  bad "CUDA_ARCH=86: $(tail -3 "$tmp/5.log"); cache: $(ls "$c")"
fi
rm -f "$obj"
mkobj NVCC_CACHE= >"$tmp/4.log" 2>&1
if grep -q 'nvcc_check.sh' "$tmp/4.log" && [ -s "$obj" ]; then ok "NVCC_CACHE= compiles"; else
  bad "NVCC_CACHE=: $(tail -3 "$tmp/4.log")"
fi
suite_end

#!/usr/bin/env bash
# vgpu-run.sh FILE.cu [ARGS...] — compile a CUDA program with nvcc, link it against libvgpu and
# run it on the virtual GPU; then print the device's counts per launch and in total.
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), NVCC_FLAGS (extra
# flags, e.g. -Ilabs -Isolutions -I.), and the device's VGPU_ORDER, VGPU_INITCHECK,
# VGPU_RACECHECK, VGPU_MAX_WARP_INSTS (cuda/vgpu/README.md). Files go to build/vgpu/run/NAME/.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 FILE.cu [ARGS...]" >&2; exit 2; }
src=$1; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "vgpu-run: no nvcc (set NVCC=): the virtual GPU runs nvcc's PTX" >&2; exit 1; }
name=$(basename "$src" .cu)
out=$root/build/vgpu/run/$name
mkdir -p "$out"
make -s -C "$root/cuda/vgpu" BUILD="$root/build/vgpu"
# shellcheck disable=SC2086
"$NVCC" -c -lineinfo -O3 -gencode arch=compute_80,code=compute_80 -keep -keep-dir "$out" \
  ${NVCC_FLAGS:-} "$src" -o "$out/$name.o"
g++ "$out/$name.o" "$root/build/vgpu/libvgpu.a" -o "$out/$name"
rc=0
VGPU_PTX=$out/$name.ptx VGPU_STATS=$out/stats "$out/$name" "$@" || rc=$?
echo "--- virtual GPU ($out/stats):"
awk '{ for (i = 1; i <= NF; i++) if ($i !~ /=0$/) printf "%s ", $i; print "" }' "$out/stats"
exit $rc

#!/usr/bin/env bash
# kit-check.sh [cuda_check args...] — the kit's own CUDA check (tests/cuda/cuda_check.c: every
# op forward and backward, the CUDA backend against the CPU) on the virtual GPU: the nvcc build's
# objects (make build/$VARIANT/cuda_check builds them) relinked against libvgpu instead of
# cudart, the kernels' PTX compiled beside them (build/vgpu/kitptx, redone when a .cu is newer),
# cuBLAS replaced by build/vgpu/blas/libcublas.so.N (gemms done by the device).
# Prints cuda_check's results, then the device's totals (build/vgpu/kit.stats, kit.log).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
VARIANT=${VARIANT:-solutions}
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "kit-check: no nvcc" >&2; exit 1; }
make -s "build/$VARIANT/cuda_check"
make -s -C cuda/vgpu BUILD="$root/build/vgpu"
# the nvcc build's link line, cudart swapped for libvgpu (vgpu_sgemm exported for the cuBLAS)
link=$(make -n -B "build/$VARIANT/cuda_check" 2>/dev/null | grep -- "-o build/$VARIANT/cuda_check" | head -1)
link=$(echo "$link" | sed -e "s|-o build/$VARIANT/cuda_check|-o build/vgpu/cuda_check_vgpu|" \
  -e 's|-L[^ ]* -lcudart_static.*$|build/vgpu/libvgpu.a -ldl -lstdc++ -Wl,--export-dynamic-symbol=vgpu_sgemm|')
eval "$link"
mkdir -p build/vgpu/kitptx
ptx=""
for f in cuda/*.cu "$VARIANT"/lab*/*.cu; do
  p=build/vgpu/kitptx/$(echo "${f%.cu}" | tr / _).ptx
  if [ ! -f "$p" ] || [ -n "$(find "$f" cuda/*.h cuda/*.cuh common/*.h -newer "$p" | head -1)" ]; then
    "$NVCC" -ptx -lineinfo -O3 -std=c++20 -arch=compute_80 -DAL_CUDA_LIBDIR='"/none"' -Ilabs -I. \
      -Icommon "$f" -o "$p"
  fi
  ptx=$ptx$p:
done
rc=0
LD_LIBRARY_PATH=$root/build/vgpu/blas VGPU_PTX=$ptx VGPU_STATS=build/vgpu/kit.stats \
  VGPU_LOG=build/vgpu/kit.log build/vgpu/cuda_check_vgpu "$@" || rc=$?
echo "--- virtual GPU totals (build/vgpu/kit.stats; reports in build/vgpu/kit.log: $(wc -l <build/vgpu/kit.log) lines):"
grep '^total' build/vgpu/kit.stats | tr ' ' '\n' | grep -v '=0$' | tr '\n' ' '
echo
exit $rc

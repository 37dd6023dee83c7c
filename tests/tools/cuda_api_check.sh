#!/usr/bin/env bash
# cuda_api_check.sh CUDA_ROOT — every .cu of the kit (cuda/, solutions/ and labs/ kernels)
# compiles against another CUDA toolkit's headers (CUDA_ROOT/include): no runtime or cuBLAS
# call newer than that toolkit. Checked with clang's CUDA front end (host and device,
# -fsyntax-only, sm_75), so it needs only the headers, not that toolkit's nvcc: e.g. Debian
# bookworm's CUDA 11.8 (non-free nvidia-cuda-dev, unpacked with dpkg-deb -x), older than any
# CUDA 12 a student has (Colab's 12.x), so what passes here is in CUDA 12 too. Not part of
# make test (a 774 MB package); cuda/README.md ("Architectures") has the last result.
#   bash tests/tools/cuda_api_check.sh /tmp/cuda118      (CUDA_ROOT/include/cuda_runtime.h)
set -uo pipefail
root=${1:?usage: cuda_api_check.sh CUDA_ROOT (a folder with include/cuda_runtime.h)}
cd "$(dirname "$0")/../.." || exit 2
clang=$(command -v clang++-14 || command -v clang++) || { echo "skip: no clang++" >&2; exit 2; }
[ -f "$root/include/cuda_runtime.h" ] || { echo "no $root/include/cuda_runtime.h" >&2; exit 2; }
v=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$root/include/cuda.h")
ver=$((v / 1000)).$((v % 1000 / 10))
# clang 14 knows CUDA up to 11.5: told 11.5, it uses the launch API of CUDA 9.2 and later
# (a newer number it does not know would select the old cudaConfigureCall)
mkdir -p "$root/bin" "$root/nvvm/libdevice"
pass=0 fail=0
for f in cuda/*.cu solutions/lab*/*.cu labs/lab*/*.cu; do
  [ -f "$f" ] || continue
  if out=$("$clang" -x cuda --cuda-path="$root" --cuda-gpu-arch=sm_75 -nocudalib -std=c++20 \
    -fsyntax-only -Wno-unknown-cuda-version -Xclang -target-sdk-version=11.5 -Ilabs \
    -DAL_CUDA_LIBDIR='"/nonexistent"' -DAL_CUDA_ARCHS='"75"' "$f" 2>&1); then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $f against CUDA $ver's headers:"
    echo "$out" | grep -m5 'error'
  fi
done
echo "CUDA $ver headers ($root): $pass .cu files compile, $fail do not"
[ $fail = 0 ]

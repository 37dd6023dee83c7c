#!/usr/bin/env bash
# vectorize.sh — every loop marked hot vectorizes on AVX2, AVX-512 and ARM64 (also: make vec-check).
#
# A loop is marked by the comment  /* hot */  on its `for` line (GCC reports a `#pragma omp simd`
# loop at its first body line, so that line counts too). Each file under common/ (and its cpu/, ops/),
# chapters/ and solutions/ holding a mark is compiled as the build compiles it (-O3, OpenMP)
# for -march=x86-64-v3 (AVX2: most students' laptops), -march=x86-64-v4 (AVX-512) and aarch64
# (NEON, with Debian's gcc-aarch64-linux-gnu where installed), with -fopt-info-vec-all; a
# marked line that GCC does not report as "loop vectorized" fails, with GCC's reason. Why it is checked, not trusted: the GRU gate loops carried a comment
# saying they vectorize, and they did only with AVX-512's masked instructions ("control flow in
# loop" under AVX2). A compiler that is missing (no cross compiler) is a skip that says so.
. "$(dirname "$0")/../suite_lib.sh" && suite_begin vectorize

CFLAGS_VEC=(-std=c11 -D_GNU_SOURCE -O3 -fno-math-errno -fopenmp -Ilabs -c -o /dev/null)
mapfile -t files < <(grep -l -F '/* hot */' common/*.c common/*/*.c chapters/*/*.c solutions/*/*.c 2>/dev/null)
if [ ${#files[@]} -eq 0 ]; then
  bad "no file holds a '/* hot */' mark: the check would assert nothing"
  suite_end
  exit 1
fi

check_isa() { # label, compiler, flags...
  local label=$1 cc=$2
  shift 2
  if ! command -v "$cc" >/dev/null 2>&1; then
    skip "$label: $cc not installed (Debian: gcc-aarch64-linux-gnu); not checked"
    return
  fi
  if ! echo 'int x;' | "$cc" "$@" -x c -c - -o /dev/null 2>/dev/null; then
    skip "$label: $cc does not accept $* (another host architecture); not checked"
    return
  fi
  local f
  for f in "${files[@]}"; do
    local log="$tmp/$(echo "$f" | tr / _).$label"
    if ! "$cc" "$@" "${CFLAGS_VEC[@]}" "$f" -fopt-info-vec-all="$log.info" 2>"$log.err"; then
      bad "$label: $f does not compile: $(head -3 "$log.err")"
      continue
    fi
    local lines missing=()
    mapfile -t lines < <(grep -n -F '/* hot */' "$f" | cut -d: -f1)
    local n
    for n in "${lines[@]}"; do
      # GCC names a `#pragma omp simd` loop by its first body line: accept the next line too
      grep -qE "^$f:($n|$((n + 1))):[0-9]+: optimized: loop vectorized" "$log.info" ||
        missing+=("$n")
    done
    if [ ${#missing[@]} -eq 0 ]; then
      ok "$label: all ${#lines[@]} hot loops of $f vectorize"
    else
      for n in "${missing[@]}"; do
        local why
        why=$(grep -E "^$f:($n|$((n + 1))):[0-9]+: missed: not vectorized" "$log.info" | head -1 |
          sed 's/.*missed: //')
        bad "$label: $f:$n is marked hot but is not vectorized (${why:-no reason given; was the loop removed or unrolled away?})"
      done
    fi
  done
}

check_isa avx2 "${CC:-gcc}" -march=x86-64-v3
check_isa avx512 "${CC:-gcc}" -march=x86-64-v4
# on an ARM64 host the native compiler is the aarch64 one
if [ "$(uname -m)" = aarch64 ]; then
  check_isa aarch64 "${CC:-gcc}" -march=armv8-a
else
  check_isa aarch64 aarch64-linux-gnu-gcc -march=armv8-a
fi
suite_end

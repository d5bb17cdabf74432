#!/usr/bin/env bash
# Build lazybcast with AddressSanitizer (and Cython's bounds checks) in a temporary copy of the
# repository and run the test suite under it; fail on any sanitizer report.
#
#   tests/asan/run_asan.sh [pytest args...]
#
# CPython itself is not instrumented: libasan is LD_PRELOADed, so every malloc/free/memcpy in
# the process is checked, and our compiled modules carry full instrumentation of their own
# loads and stores. detect_leaks=0 because CPython keeps memory until exit by design;
# allocator_may_return_null=1 so that a huge allocation is a MemoryError, as without ASan.
# Needs gcc (or cc) with libasan, and Cython, setuptools and the test extras in the current
# Python environment. Set LAZYBCAST_BOUNDSCHECK=0 to build without the bounds checks.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python}
cc=${CC:-gcc}

libasan=$("$cc" -print-file-name=libasan.so)
if [ ! -e "$libasan" ] || [ "$libasan" = "libasan.so" ]; then
    echo "run_asan.sh: $cc has no libasan.so; install the compiler's AddressSanitizer runtime" >&2
    exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy="$tmp/src"
mkdir "$copy"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$root" && git ls-files -z --cached --others --exclude-standard) \
        | (cd "$root" && tar --null -T - -cf -) | tar -xf - -C "$copy"
else
    (cd "$root" && tar --exclude=build --exclude='*.so' --exclude='.git' -cf - .) \
        | tar -xf - -C "$copy"
fi
rm -f "$copy"/lazybcast/*.so "$copy"/lazybcast/*.c

t0=$SECONDS
(cd "$copy" && LAZYBCAST_ASAN=1 LAZYBCAST_BOUNDSCHECK=${LAZYBCAST_BOUNDSCHECK:-1} \
    "$python" setup.py -q build_ext --inplace >"$tmp/build.log" 2>&1) \
    || { cat "$tmp/build.log"; echo "run_asan.sh: the ASan build failed" >&2; exit 1; }
echo "ASan build: $((SECONDS - t0)) s"
for so in "$copy"/lazybcast/_kernels.*.so "$copy"/lazybcast/_view.*.so; do
    grep -q __asan_init "$so" || { echo "run_asan.sh: $so is not instrumented" >&2; exit 1; }
done

logs="$tmp/asan-logs"
mkdir "$logs"
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:halt_on_error=1:log_path=$logs/asan:${ASAN_OPTIONS:-}"
asan_python() { (cd "$copy" && LAZYBCAST_UNDER_ASAN=1 LD_PRELOAD="$libasan${LD_PRELOAD:+:$LD_PRELOAD}" "$python" "$@"); }

# 1. The sanitizer is live: a source whose strides reach past its buffer (built with
#    as_strided, which NumPy does not check) must be reported by our instrumented kernel.
if asan_python -c "
import numpy as np, lazybcast._kernels as k
from numpy.lib.stride_tricks import as_strided
src = as_strided(np.zeros(4096), shape=(4096 + 64,), strides=(8,))
k.copy_broadcast(src, np.empty(4096 + 64))
" >/dev/null 2>&1 || ! ls "$logs"/asan.* >/dev/null 2>&1; then
    echo "run_asan.sh: the canary out-of-bounds read was not reported; ASan is not active" >&2
    exit 1
fi
grep -q "heap-buffer-overflow" "$logs"/asan.* || { cat "$logs"/asan.*; exit 1; }
rm -f "$logs"/asan.*
echo "ASan canary: out-of-bounds read reported as expected"

# 2. The suite, from the copy (its in-place build shadows any installed lazybcast).
asan_python -c "import lazybcast._view as v, sys; sys.exit(not v.__file__.startswith('$copy'))" \
    || { echo "run_asan.sh: the tests would not import the ASan build" >&2; exit 1; }
t0=$SECONDS
status=0
asan_python -m pytest -q -p no:cacheprovider "$@" || status=$?
echo "ASan test run: $((SECONDS - t0)) s, pytest exit status $status"
# Warnings such as "failed to allocate 0x10000000000 bytes" (the MemoryError tests) are not
# reports; any ERROR/SUMMARY line is.
if ls "$logs"/asan.* >/dev/null 2>&1; then
    if grep -l -E "ERROR: AddressSanitizer|SUMMARY: AddressSanitizer" "$logs"/asan.* >/dev/null; then
        cat "$logs"/asan.*
        echo "run_asan.sh: AddressSanitizer reported errors (above)" >&2
        exit 1
    fi
    echo "ASan warnings (not errors): $(cat "$logs"/asan.* | sort | uniq -c | tr -s ' ')"
fi
exit "$status"

#!/bin/sh
# Builds the libcdsprpc test double (and its variants) into OUTDIR; with --selftest also builds and runs the
# C self-test against each variant. Needs only a C11 compiler (cc, or $CC) with libc, libm and pthread.
set -eu
selftest=0
if [ "${1:-}" = "--selftest" ]; then selftest=1; shift; fi
if [ $# -ne 1 ]; then
    echo "usage: $0 [--selftest] OUTDIR" >&2
    exit 2
fi
out=$1
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
cflags="-std=c11 -O1 -g -fPIC -pthread -fvisibility=hidden -Wall -Wextra -Wno-unused-parameter -Werror"
srcs="$here/core.c $here/queue.c $here/ops.c $here/wire_check.c"
mkdir -p "$out" "$out/nosysreq" "$out/noalloc2"
# -Wl,-soname matches the real library so a loader that checks it sees the same name.
# shellcheck disable=SC2086
$cc $cflags -shared -Wl,-soname,libcdsprpc.so.1 -o "$out/libcdsprpc.so" $srcs -lm
# shellcheck disable=SC2086
$cc $cflags -DHD_NO_SYSREQ -shared -Wl,-soname,libcdsprpc.so.1 -o "$out/nosysreq/libcdsprpc.so" $srcs -lm
# shellcheck disable=SC2086
$cc $cflags -DHD_NO_SYSREQ -DHD_NO_ALLOC2 -shared -Wl,-soname,libcdsprpc.so.1 -o "$out/noalloc2/libcdsprpc.so" $srcs -lm
if [ $selftest -eq 1 ]; then
    # shellcheck disable=SC2086
    $cc $cflags -o "$out/selftest" "$here/selftest.c" -ldl -lm
    "$out/selftest" "$out"
fi

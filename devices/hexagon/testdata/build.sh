#!/bin/sh
# Builds the libcdsprpc test double (and its variants) into OUTDIR. Needs only a C11 compiler (cc, or $CC) with
# libc, libm and pthread.
#   --selftest       also build and run the C self-test (selftest.c)
#   --oracle REFDIR  also build and run oracle.c: the double's op math against the real ggml in REFDIR
#                    (the directory holding libggml-base.so and libggml-cpu-*.so)
set -eu
selftest=0
refdir=
while [ $# -gt 1 ]; do
    case $1 in
    --selftest) selftest=1; shift ;;
    --oracle) refdir=$2; shift 2 ;;
    *) break ;;
    esac
done
if [ $# -ne 1 ]; then
    echo "usage: $0 [--selftest] [--oracle REFDIR] OUTDIR" >&2
    exit 2
fi
out=$1
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
cflags="-std=c11 -O2 -g -fPIC -pthread -fvisibility=hidden -Wall -Wextra -Wno-unused-parameter ${CFLAGS:-}"
mkdir -p "$out/nosysreq" "$out/noalloc2" "$out/.obj"
obj=$out/.obj
# Only core.c differs between the variants; the rest is compiled once.
for f in queue ops ggml wire_check; do
    # shellcheck disable=SC2086
    $cc $cflags -c -o "$obj/$f.o" "$here/$f.c"
done
common="$obj/queue.o $obj/ops.o $obj/ggml.o $obj/wire_check.o"
link() { # link OUTFILE CPPFLAGS...
    o=$1; shift
    # shellcheck disable=SC2086
    $cc $cflags "$@" -c -o "$o.core.o" "$here/core.c"
    # -soname as the real library, for loaders that look at it
    # shellcheck disable=SC2086
    $cc $cflags -shared -Wl,-soname,libcdsprpc.so.1 -o "$o" "$o.core.o" $common -ldl -lm
    rm -f "$o.core.o"
}
link "$out/libcdsprpc.so"
link "$out/nosysreq/libcdsprpc.so" -DHD_NO_SYSREQ
link "$out/noalloc2/libcdsprpc.so" -DHD_NO_SYSREQ -DHD_NO_ALLOC2
rm -rf "$obj"
if [ $selftest -eq 1 ]; then
    # shellcheck disable=SC2086
    $cc $cflags -o "$out/selftest" "$here/selftest.c" "$here/harness.c" -ldl -lm
    "$out/selftest" "$out"
fi
if [ -n "$refdir" ]; then
    # shellcheck disable=SC2086
    $cc $cflags -o "$out/oracle" "$here/oracle.c" "$here/harness.c" -ldl -lm
    "$out/oracle" "$out" "$refdir"
fi

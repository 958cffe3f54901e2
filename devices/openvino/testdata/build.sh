#!/bin/sh
# Builds the OpenVINO C API test double (ovdouble) into OUTDIR as libopenvino_c.so, and beside it libOpenCL.so.1
# (a link to the same library, whose OpenCL entry points reach the GPU's USM memory: ovd_ocl.c) unless --no-opencl.
# Usage: build.sh [--omit SYMBOL]... [--with-props] [--no-opencl] [--selftest] OUTDIR
# Needs only a C11 compiler (CC, default cc), libc, libm and pthread. Prints the library path last.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
CFLAGS=${CFLAGS:-"-O2"}
omit=""
props=0
selftest=0
opencl=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --omit) [ $# -ge 2 ] || { echo "build.sh: --omit needs a symbol" >&2; exit 2; }; omit="$omit $2"; shift 2 ;;
    --with-props) props=1; shift ;;
    --selftest) selftest=1; shift ;;
    --no-opencl) opencl=0; shift ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    -*) echo "build.sh: unknown flag $1" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "build.sh: one OUTDIR only" >&2; exit 2; }; out=$1; shift ;;
  esac
done
[ -z "$omit" ] || [ "$selftest" = 0 ] || { echo "build.sh: --selftest links every symbol; build it without --omit" >&2; exit 2; }
[ -n "$out" ] || { echo "usage: build.sh [--omit SYMBOL]... [--with-props] [--no-opencl] [--selftest] OUTDIR" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
soname=libopenvino_c.so.2510

# Up to date already (same flags, library newer than every source): nothing to do. Lets several test binaries share
# one OUTDIR cheaply.
stamp="CC=$CC CFLAGS=$CFLAGS omit=$omit props=$props opencl=$opencl"
if [ "$selftest" = 0 ] && [ -f "$out/libopenvino_c.so" ] && [ -f "$out/.ovdouble.stamp" ] &&
   [ "$(cat "$out/.ovdouble.stamp")" = "$stamp" ] &&
   [ -z "$(find "$here" -maxdepth 1 \( -name '*.c' -o -name '*.h' -o -name build.sh \) -newer "$out/libopenvino_c.so")" ]; then
  echo "$out/libopenvino_c.so"
  exit 0
fi
rm -f "$out/.ovdouble.stamp"

# Hiding a symbol with a version script keeps the rest of the build identical: exact names beat the wildcard.
vs="$out/.ovdouble.map.$$"
trap 'rm -f "$vs" "$out/libopenvino_c.so.tmp.$$"' EXIT
{
  echo "{ global: *;"
  if [ -n "$omit" ]; then
    printf "  local:"
    for s in $omit; do printf " %s;" "$s"; done
    echo
  fi
  echo "};"
} > "$vs"

defs=""
[ "$props" = 1 ] && defs="-DOVD_WITH_PROPS=1"
srcs="$here/ovd_ctl.c $here/ovd_types.c $here/ovd_xml.c $here/ovd_ir.c $here/ovd_ops.c $here/ovd_npu.c $here/ovd_api.c $here/ovd_ocl.c"
# shellcheck disable=SC2086
$CC -std=c11 -D_GNU_SOURCE $CFLAGS $defs -Wall -Wextra -Wno-unused-parameter -fPIC -fvisibility=hidden -shared \
  -Wl,-soname,$soname -Wl,--version-script="$vs" -o "$out/libopenvino_c.so.tmp.$$" $srcs -lm -lpthread
mv "$out/libopenvino_c.so.tmp.$$" "$out/libopenvino_c.so"
ln -sf libopenvino_c.so "$out/$soname"
# the same file under OpenCL's name: a loader opening both gets one library (one set of USM allocations)
rm -f "$out/libOpenCL.so.1"
[ "$opencl" = 0 ] || ln -s libopenvino_c.so "$out/libOpenCL.so.1"
rm -f "$vs"
# the variant must lack exactly the named symbols: a misspelt --omit would otherwise build the full library
for s in $omit; do
  grep -q "[ *]$s(" "$here/ovd_decl.h" || { echo "build.sh: --omit $s: not a function of the double" >&2; exit 1; }
  if command -v nm >/dev/null && nm -D --defined-only "$out/libopenvino_c.so" | awk '{print $3}' | grep -qx "$s"; then
    echo "build.sh: --omit $s: the symbol is still exported" >&2; exit 1
  fi
done

printf '%s' "$stamp" > "$out/.ovdouble.stamp"

if [ "$selftest" = 1 ]; then
  # shellcheck disable=SC2086
  $CC -std=c11 -D_GNU_SOURCE $CFLAGS $defs -Wall -Wextra -Wno-unused-parameter -o "$out/ovdouble_selftest" \
    "$here/selftest.c" -L"$out" -lopenvino_c -Wl,-rpath,"$out" -lm
  "$out/ovdouble_selftest" "$out/libopenvino_c.so"
fi
echo "$out/libopenvino_c.so"

#!/bin/sh
# Mutation run of the Hexagon host (devices/hexagon/README.md, "Mutation run"): applies each mutation below to a
# file of the worktree, runs the device's tests, restores the file, and prints one line per mutation: caught (the
# tests failed, with the first failing tests) or SURVIVED. Mutations are never committed; the file is restored
# even when interrupted.
#
#   devices/hexagon/testdata/mutate.sh [ID...]     # from the repository root; all mutations without IDs
#
# Each mutation: ID, file, a perl substitution (applied with -0pi, must change the file), what it breaks.
set -u
cd "$(dirname "$0")/../../.." || exit 2
PKGS="${MUTATE_PKGS:-./devices/hexagon/...}"

mutations() {
cat <<'EOF'
flush-sender|devices/hexagon/batch.go|s/Flags: fastrpc\.BufferFlagFlushSender . fastrpc\.BufferFlagInvalidateRecipient/Flags: fastrpc.BufferFlagInvalidateRecipient/|the request buffer without FLUSH_SENDER (original escape 1)
invalidate-recipient|devices/hexagon/batch.go|s/Flags: fastrpc\.BufferFlagFlushSender . fastrpc\.BufferFlagInvalidateRecipient/Flags: fastrpc.BufferFlagFlushSender/|the request buffer without INVALIDATE_RECIPIENT (original escape 2)
unsigned-ignored|devices/hexagon/session.go|s/if err := s\.lib\.EnableUnsignedModules\(s\.domainID\); err != nil \{/if err := s.lib.EnableUnsignedModules(s.domainID); false \&\& err != nil {/|the UNSIGNED_MODULE answer ignored (original escape 3)
no-compute-flag|devices/hexagon/batch.go|s/\treturn htp\.TensorCompute\n\}/\treturn 0\n}/|no COMPUTE flag on any tensor (public protocol)
inverted-flags|devices/hexagon/batch.go|s/\tif inWeights\(t\) \{\n\t\treturn 0\n\t\}\n\treturn htp\.TensorCompute/\tif inWeights(t) {\n\t\treturn htp.TensorCompute\n\t}\n\treturn 0/|COMPUTE on weights and not on activations (the flags as they were before the fix)
any-usage-is-weights|devices/hexagon/batch.go|s/return ok && u\.Usage\(\) == buffer\.UsageWeights/return ok \&\& u.Usage() != buffer.UsageCompute/|buffers of usage ANY (KV cache, user buffers) taken for weights: no COMPUTE flag
views-not-followed|devices/hexagon/batch.go|s/\tfor t\.ViewSrc != nil \{\n\t\tt = t\.ViewSrc\n\t\}\n\tu, ok := t\.Buffer/\tu, ok := t.Buffer/|a view's usage read from the view, not from the tensor it views
flush-half|devices/hexagon/batch.go|s/buf := fastrpc\.QueueBuffer\{FD: uint32\(q\.blk\.fd\), Size: uint32\(n\),/buf := fastrpc.QueueBuffer{FD: uint32(q.blk.fd), Size: uint32(n \/ 2),/|the request buffer's flushed range only half of what the batch wrote
flush-offset-0|devices/hexagon/batch.go|s/Size: uint32\(n\), Offset: uint32\(off\),/Size: uint32(n), Offset: 0,/|the request buffer's range at the start of the op queue instead of the batch's slot
fence-no-tiled|devices/hexagon/batch.go|s/return x\.flags & htp\.TensorWireMask/return x.flags \&^ htp.TensorTiled \& htp.TensorWireMask/|fence protocol: the TILED flag dropped from repacked weights
fence-no-weight|devices/hexagon/batch.go|s/return x\.flags & htp\.TensorWireMask/return x.flags \&^ htp.TensorWeight \& htp.TensorWireMask/|fence protocol: the WEIGHT flag dropped
no-extended-flag|devices/hexagon/batch.go|s/\t\td\.Flags = htp\.BufExtended\n//|a DMA64 (extended) mapping sent without the buffer's EXTENDED flag
EOF
}

backup=""
file=""
restore() { if [ -n "$backup" ]; then cp "$backup" "$file"; rm -f "$backup"; backup=""; fi; }
trap 'restore; exit 130' INT TERM
trap restore EXIT

mutations | while IFS='|' read -r id f subst what; do
	if [ $# -gt 0 ]; then
		case " $* " in *" $id "*) ;; *) continue ;; esac
	fi
	file=$f
	backup=$(mktemp)
	cp "$file" "$backup"
	perl -0pi -e "$subst" "$file"
	if cmp -s "$file" "$backup"; then
		echo "$id: NOT APPLIED ($what)"
		restore
		continue
	fi
	start=$(date +%s)
	out=$(go test -count=1 $PKGS 2>&1)
	rc=$?
	secs=$(($(date +%s) - start))
	restore
	if [ $rc -ne 0 ]; then
		failed=$(printf '%s\n' "$out" | sed -n 's/^--- FAIL: \([^ ]*\).*/\1/p' | head -4 | tr '\n' ' ')
		[ -n "$failed" ] || failed=$(printf '%s\n' "$out" | grep -m1 -E 'panic|cannot|undefined' || echo "build or run failure")
		echo "$id: caught by $failed(${secs}s; $what)"
	else
		echo "$id: SURVIVED (${secs}s; $what)"
	fi
done

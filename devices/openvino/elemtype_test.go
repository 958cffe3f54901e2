package openvino

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNumberingFacts checks both element-type numberings against the
// per-release table of testdata/facts/c-api-versions.txt (columns
// 2025.0.0, 2025.1-2025.2, 2026.1.2; "-" where a release has no such
// value), so the offsets in elemtype.go cannot drift from the measured
// headers.
func TestNumberingFacts(t *testing.T) {
	f, err := os.Open("testdata/facts/c-api-versions.txt")
	require.NoError(t, err)
	defer f.Close()
	// The C spellings that are not the IR names: openvino.h #defines
	// BOOLEAN as OV_BOOLEAN, and the C enum spells f8e5m2 F8E5M3.
	cName := map[string]string{"OV_BOOLEAN": "boolean", "F8E5M3": "f8e5m2"}
	byName := map[string]elemType{}
	for e := range etCount {
		byName[e.String()] = e
	}
	releases := []*numbering{numbering2025_0, numbering2025_1, numbering2025_1}
	rows := 0
	sc := bufio.NewScanner(f)
	inTable := false
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) > 0 && fields[0] == "ov_element_type_e":
			inTable = true
			continue
		case !inTable:
			continue
		case len(fields) != 4:
			inTable = false
			continue
		}
		name := strings.ToLower(fields[0])
		if n, ok := cName[fields[0]]; ok {
			name = n
		}
		for i, col := range fields[1:] {
			if col == "-" {
				continue
			}
			v, err := strconv.ParseInt(col, 10, 32)
			require.NoError(t, err)
			e, ok := releases[i].fromC(int32(v))
			if name == "undefined" {
				// 2025.0 has its own UNDEFINED (no element type); 2025.1
				// and 2025.2 keep the name as an alias of DYNAMIC (0).
				if ok {
					require.Equal(t, etDynamic, e, "UNDEFINED=%d in %s", v, releases[i].name)
				}
				continue
			}
			require.True(t, ok, "%s=%d in %s", fields[0], v, releases[i].name)
			require.Equal(t, byName[name], e, "%s=%d in %s", fields[0], v, releases[i].name)
			require.EqualValues(t, v, releases[i].c(e))
		}
		rows++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, int(etCount)+1, rows, "every element type and UNDEFINED has a row")
}

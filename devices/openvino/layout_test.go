package openvino

import (
	"bufio"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// cFacts is what testdata/facts/c-api-layouts-2025.0.0.txt (printed by cc
// from the 2025.0.0 release headers) says: struct sizes and alignments,
// field offsets and sizes, and enum values.
type cFacts struct {
	size, align map[string]int
	offset      map[string]map[string]int
	fieldSize   map[string]map[string]int
	enums       map[string]map[string]int64
}

func readCFacts(t *testing.T) cFacts {
	f, err := os.Open("testdata/facts/c-api-layouts-2025.0.0.txt")
	require.NoError(t, err)
	defer f.Close()
	c := cFacts{size: map[string]int{}, align: map[string]int{}, offset: map[string]map[string]int{},
		fieldSize: map[string]map[string]int{}, enums: map[string]map[string]int64{}}
	reSize := regexp.MustCompile(`^sizeof\((\w+)\) = (\d+)(?:, alignof = (\d+))?$`)
	reOff := regexp.MustCompile(`^  offsetof\((\w+), (\w+)\) = (\d+), sizeof = (\d+)$`)
	reEnum := regexp.MustCompile(`^(\w+)(?: \(.*\))?:$`)
	reVal := regexp.MustCompile(`^  (\w+)\s+= (-?\d+)$`)
	enum := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := reSize.FindStringSubmatch(line); m != nil {
			c.size[m[1]], _ = strconv.Atoi(m[2])
			if m[3] != "" {
				c.align[m[1]], _ = strconv.Atoi(m[3])
			}
		} else if m := reOff.FindStringSubmatch(line); m != nil {
			if c.offset[m[1]] == nil {
				c.offset[m[1]], c.fieldSize[m[1]] = map[string]int{}, map[string]int{}
			}
			c.offset[m[1]][m[2]], _ = strconv.Atoi(m[3])
			c.fieldSize[m[1]][m[2]], _ = strconv.Atoi(m[4])
		} else if m := reEnum.FindStringSubmatch(line); m != nil {
			enum = m[1]
			c.enums[enum] = map[string]int64{}
		} else if m := reVal.FindStringSubmatch(line); m != nil && enum != "" {
			c.enums[enum][m[1]], _ = strconv.ParseInt(m[2], 10, 64)
		} else if strings.TrimSpace(line) == "" {
			enum = ""
		}
	}
	require.NoError(t, sc.Err())
	return c
}

// TestStructLayouts checks every Go struct that crosses the C boundary
// against the measured layout, field by field in declaration order (Go
// fields named _ are the C compiler's padding). The facts are LP64 (linux
// and darwin amd64/arm64); Windows is LLP64, where these structs (pointers
// and 64-bit integers only) have the same layout.
func TestStructLayouts(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the C API layouts are pinned for 64-bit targets")
	}
	c := readCFacts(t)
	for _, s := range []struct {
		c string
		v any
	}{
		{"ov_shape_t", ovShape{}},
		{"ov_version_t", ovVersion{}},
		{"ov_available_devices_t", ovAvailableDevices{}},
		{"ov_profiling_info_t", ovProfilingInfo{}},
		{"ov_profiling_info_list_t", ovProfilingInfoList{}},
	} {
		typ := reflect.TypeOf(s.v)
		require.Contains(t, c.size, s.c, "the facts file measures %s", s.c)
		require.EqualValues(t, c.size[s.c], typ.Size(), "sizeof %s", s.c)
		require.EqualValues(t, c.align[s.c], typ.Align(), "alignof %s", s.c)
		var fields []reflect.StructField
		for i := range typ.NumField() {
			if f := typ.Field(i); f.Name != "_" {
				fields = append(fields, f)
			}
		}
		require.Len(t, fields, len(c.offset[s.c]), "%s has as many fields as the C struct", s.c)
		// The C fields in offset order are the Go fields in order.
		names := make([]string, 0, len(c.offset[s.c]))
		for n := range c.offset[s.c] {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return c.offset[s.c][names[i]] < c.offset[s.c][names[j]] })
		for i, f := range fields {
			n := names[i]
			require.EqualValues(t, c.offset[s.c][n], f.Offset, "offsetof(%s, %s) (Go field %s)", s.c, n, f.Name)
			require.EqualValues(t, c.fieldSize[s.c][n], f.Type.Size(), "sizeof %s.%s (Go field %s)", s.c, n, f.Name)
		}
	}
}

// TestStatusFacts checks the status names the device reports against the
// release's ov_status_e.
func TestStatusFacts(t *testing.T) {
	c := readCFacts(t)
	st := c.enums["ov_status_e"]
	require.NotEmpty(t, st)
	require.Len(t, statusNames, len(st))
	for name, v := range st {
		require.Equal(t, name, statusNames[int32(v)], "ov_status_e %d", v)
	}
}

package fastrpc

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The C layouts of the public headers (quic/fastrpc inc/, LP64, measured
// with gcc; hexagon.md §6), and of the 96-byte fastrpc_domain of
// Qualcomm's test stub: size, then each named field's offset.
var cLayouts = []struct {
	v      any
	size   uintptr
	fields map[string]uintptr
}{
	{RemoteBuf{}, 16, map[string]uintptr{"Pv": 0, "NLen": 8}},
	{ControlLatencyArg{}, 8, map[string]uintptr{"Enable": 0, "Latency": 4}},
	{DSPCapability{}, 12, map[string]uintptr{"Domain": 0, "AttributeID": 4, "Capability": 8}},
	{UnsignedModuleArg{}, 8, map[string]uintptr{"Domain": 0, "Enable": 4}},
	{ReserveNewSessionArg{}, 40, map[string]uintptr{"DomainName": 0, "DomainNameLen": 8, "SessionName": 16,
		"SessionNameLen": 24, "EffectiveDomainID": 28, "SessionID": 32}},
	{EffectiveDomainIDArg{}, 24, map[string]uintptr{"DomainName": 0, "DomainNameLen": 8, "SessionID": 12, "EffectiveDomainID": 16}},
	{GetURIArg{}, 48, map[string]uintptr{"DomainName": 0, "DomainNameLen": 8, "SessionID": 12, "ModuleURI": 16,
		"ModuleURILen": 24, "URI": 32, "URILen": 40}},
	{QueueBuffer{}, 24, map[string]uintptr{"FD": 0, "Size": 4, "Offset": 8, "Flags": 12, "Ptr": 16}},
	{DomainInfo{}, 96, map[string]uintptr{"ID": 0, "InstanceID": 4, "Name": 8, "Type": 40, "Status": 44, "Card": 48,
		"SocID": 52, "Reserved": 56}},
	{DomainsInfo{}, 24, map[string]uintptr{"Domains": 0, "MaxDomains": 8, "NumDomains": 12, "Flags": 16}},
	{SystemRequest{}, 32, map[string]uintptr{"ID": 0, "Sys": 8}},
}

func TestLayouts(t *testing.T) {
	if reflect.TypeOf(uintptr(0)).Size() != 8 {
		t.Skip("the C layouts are LP64")
	}
	for _, c := range cLayouts {
		typ := reflect.TypeOf(c.v)
		require.Equal(t, c.size, typ.Size(), typ.Name())
		named := 0
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if f.Name == "_" {
				continue
			}
			named++
			off, ok := c.fields[f.Name]
			require.True(t, ok, "%s.%s has no C field", typ.Name(), f.Name)
			require.Equal(t, off, f.Offset, "%s.%s", typ.Name(), f.Name)
		}
		require.Equal(t, len(c.fields), named, typ.Name())
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		code    uint32
		name    string
		meaning string
	}{
		{0x72, "ECONNREFUSED", "no FastRPC device"},
		{0x14, "EUNSUPPORTED", "no DSP"},
		{0x80000406, "DSP EUNABLETOLOAD", "search path"},
		{0x80000414, "DSP EUNSUPPORTED", "another Hexagon arch"},
		{0xe, "EBADPARM", "not mapped into this session"},
		{0x6c, "EUNSUPPORTEDAPI", "lacks the API"},
		{0x6b, "ENOTINITIALIZED", "no session is open"},
		{0x12345, "AEE 0x12345", ""},
	} {
		e := Error(c.code)
		require.Equal(t, c.name, e.Name())
		require.Contains(t, e.Meaning(), c.meaning)
		require.Contains(t, e.Error(), c.name)
	}
	require.NoError(t, Check(0))
	var e Error
	require.ErrorAs(t, Check(0x72), &e)
	require.Equal(t, EConnRefused, e)
}

func TestSearchPlaces(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "libmy.so")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	names, dirs := SearchPlaces(file)
	require.Equal(t, []string{"libmy.so"}, names)
	require.Equal(t, []string{dir}, dirs, "a file is used alone")

	pn, pd := platformPlaces()
	names, dirs = SearchPlaces(dir)
	require.Equal(t, pn, names)
	require.Equal(t, append([]string{dir}, pd...), dirs, "a folder is searched first")

	missing := filepath.Join(dir, "nothere", "libcdsprpc.so")
	names, dirs = SearchPlaces(missing)
	require.Equal(t, []string{"libcdsprpc.so"}, names)
	require.Equal(t, []string{filepath.Dir(missing)}, dirs)

	names, _ = SearchPlaces("")
	require.True(t, strings.HasPrefix(names[0], "libcdsprpc"))
}

package hexagon

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxSessions is the most devices (FastRPC sessions) the backend opens,
// GGML_HEXAGON_MAX_SESSIONS of upstream.
const MaxSessions = 16

// DeviceConfig is one device of GGML_HEXAGON_DEVICES: a FastRPC session on
// a physical NPU core (Physical) with a virtual session index (Virtual; 0
// is the core's default session), and for a multi-core group device the
// other cores' sessions, driven together (upstream's mdev group).
type DeviceConfig struct {
	Name     string
	Physical int
	Virtual  int
	// Group are the other members of a multi-core group device, each
	// named HTPp:v; empty for a single-session device.
	Group []DeviceConfig
}

// String describes the device: name, core, virtual session, group.
func (c DeviceConfig) String() string {
	s := fmt.Sprintf("%s (phys %d, virt %d)", c.Name, c.Physical, c.Virtual)
	if len(c.Group) > 0 {
		var g []string
		for _, m := range c.Group {
			g = append(g, m.Name)
		}
		s += " with " + strings.Join(g, ", ")
	}
	return s
}

// ParseDevices reads the GGML_HEXAGON_DEVICES grammar:
//
//	N                  N sessions on core 0: HTP0 .. HTP(N-1), virtual 0..N-1 (1..16)
//	HTPp               the default session of core p
//	HTPp:v             virtual session v of core p
//	Name[spec]         a group device over the cores of spec: "0-1", "0,2", "0-1,3"
//	Name[spec:v]       the same on virtual session v of each core (Name:v[spec] too, named Name:v)
//
// Items are separated by commas outside brackets. As upstream, an item
// that cannot be read is skipped with a warning, and items past
// MaxSessions are dropped with a warning; the result is an error only
// when no device is left, or a name is listed twice. Unlike upstream,
// numbers must be whole (no "1x"), core indices lie in 0..MaxSessions-1,
// virtual indices in 0..MaxSessions-1, and ranges must
// ascend.
func ParseDevices(s string) (cfgs []DeviceConfig, warnings []string, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return []DeviceConfig{{Name: "HTP0"}}, nil, nil
	}
	warn := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	if allDigits(s) {
		n, err := strconv.Atoi(s)
		if err != nil || n > MaxSessions {
			warn("%d devices asked for, at most %d", n, MaxSessions)
			n = MaxSessions
		}
		if n < 1 {
			warn("%q devices: using 1", s)
			n = 1
		}
		for i := range n {
			cfgs = append(cfgs, DeviceConfig{Name: "HTP" + strconv.Itoa(i), Virtual: i})
		}
		return cfgs, warnings, nil
	}
	seen := map[string]bool{}
	for _, item := range splitItems(s) {
		c, ok, why := parseItem(item)
		if !ok {
			warn("device %q skipped: %s", item, why)
			continue
		}
		if len(cfgs) >= MaxSessions {
			warn("device %q skipped: at most %d devices", item, MaxSessions)
			continue
		}
		key := strings.ToUpper(c.Name)
		if seen[key] {
			return nil, warnings, fmt.Errorf("hexagon: device %q listed twice in %q", c.Name, s)
		}
		seen[key] = true
		cfgs = append(cfgs, c)
	}
	if len(cfgs) == 0 {
		return nil, warnings, fmt.Errorf("hexagon: no device in %q (want N, HTPp, HTPp:v or Name[cores:v])", s)
	}
	return cfgs, warnings, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// splitItems splits at commas outside brackets and trims each item,
// dropping empty ones (as upstream).
func splitItems(s string) []string {
	var items []string
	depth, start := 0, 0
	add := func(x string) {
		if x = strings.TrimSpace(x); x != "" {
			items = append(items, x)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return items
}

// maxVirtual bounds virtual indices: FastRPC decides how many sessions a core
// has (4 in the open-source library), the grammar only keeps them sane.
const maxVirtual = MaxSessions - 1

func index(s string, limit int) (int, bool) {
	s = strings.TrimSpace(s)
	if !allDigits(s) || len(s) > 4 {
		return 0, false
	}
	n, _ := strconv.Atoi(s)
	return n, n <= limit
}

func parseItem(item string) (DeviceConfig, bool, string) {
	open, close := strings.IndexByte(item, '['), strings.LastIndexByte(item, ']')
	if open >= 0 && close > open {
		if strings.TrimSpace(item[close+1:]) != "" {
			return DeviceConfig{}, false, "text after ']'"
		}
		return parseGroup(item[:open], item[open+1:close])
	}
	rest, ok := strings.CutPrefix(item, "HTP")
	if !ok {
		return DeviceConfig{}, false, "must start with HTP, or be a group Name[cores]"
	}
	ps, vs, hasV := strings.Cut(rest, ":")
	p, ok := index(ps, MaxSessions-1)
	if !ok {
		return DeviceConfig{}, false, fmt.Sprintf("core index %q is not 0..%d", ps, MaxSessions-1)
	}
	c := DeviceConfig{Name: "HTP" + strconv.Itoa(p), Physical: p}
	if hasV {
		v, ok := index(vs, maxVirtual)
		if !ok {
			return DeviceConfig{}, false, fmt.Sprintf("virtual index %q is not 0..%d", vs, maxVirtual)
		}
		c.Virtual = v
		c.Name += ":" + strconv.Itoa(v)
	}
	return c, true, ""
}

func parseGroup(name, content string) (DeviceConfig, bool, string) {
	// The device keeps the whole name, ":v" included, as upstream's
	// (everything before '['); a virtual index in the brackets wins over
	// the name's.
	name = strings.TrimSpace(name)
	base, nv, named := strings.Cut(name, ":")
	spec, vs, hasV := strings.Cut(content, ":")
	if !hasV && named {
		vs, hasV = nv, true
	}
	if base == "" || strings.ContainsAny(base, "[]:, \t") || named && strings.ContainsAny(nv, "[]:, \t") {
		return DeviceConfig{}, false, fmt.Sprintf("bad group name %q", name)
	}
	virt := 0
	if hasV {
		v, ok := index(vs, maxVirtual)
		if !ok {
			return DeviceConfig{}, false, fmt.Sprintf("virtual index %q is not 0..%d", vs, maxVirtual)
		}
		virt = v
	}
	var cores []int
	have := map[int]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi := part, part
		if a, b, ok := strings.Cut(part, "-"); ok {
			lo, hi = a, b
		}
		a, ok1 := index(lo, MaxSessions-1)
		b, ok2 := index(hi, MaxSessions-1)
		if !ok1 || !ok2 || b < a {
			return DeviceConfig{}, false, fmt.Sprintf("core range %q is not p or p-q with 0 <= p <= q <= %d", part, MaxSessions-1)
		}
		for p := a; p <= b; p++ {
			if !have[p] {
				have[p] = true
				cores = append(cores, p)
			}
		}
	}
	if len(cores) == 0 {
		cores = []int{0}
	}
	c := DeviceConfig{Name: name, Physical: cores[0], Virtual: virt}
	for _, p := range cores[1:] {
		c.Group = append(c.Group, DeviceConfig{Name: fmt.Sprintf("HTP%d:%d", p, virt), Physical: p, Virtual: virt})
	}
	return c, true, ""
}

package hexagon

import (
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
)

// PowerMode is the DSP power profile asked for at session start (the
// upstream's HTP_POWER_MODE_*, whose values are not public: the public
// htp_iface start has no power mode, so it is not sent; see htp.StartCall).
type PowerMode int

// Power modes, in upstream's order.
const (
	PowerLowPowerSaver PowerMode = iota
	PowerPowerSaver
	PowerHighPowerSaver
	PowerLowBalanced
	PowerBalanced
	PowerHighPerformance
	PowerSustainedHighPerformance
	PowerBurst
)

var powerNames = [...]string{"low_power_saver", "power_saver", "high_power_saver", "low_balanced", "balanced",
	"high_performance", "sustained_high_performance", "burst"}

// String is the mode's name as GGML_HEXAGON_POWER_MODE spells it.
func (m PowerMode) String() string {
	if m >= 0 && int(m) < len(powerNames) {
		return powerNames[m]
	}
	return "unknown"
}

// ParsePowerMode reads a power mode name (case does not matter; "default"
// is burst).
func ParsePowerMode(s string) (PowerMode, error) {
	if strings.EqualFold(s, "default") {
		return PowerBurst, nil
	}
	for i, n := range powerNames {
		if strings.EqualFold(s, n) {
			return PowerMode(i), nil
		}
	}
	return 0, fmt.Errorf("hexagon: unknown power mode %q (want one of %s or default)", s, strings.Join(powerNames[:], ", "))
}

// Auto marks an option whose default depends on the DSP's arch (Vmem,
// DMA64).
const Auto = -1

// Sizes in bytes.
const (
	KiB = 1 << 10
	MiB = 1 << 20
	GiB = 1 << 30
)

// Options configure the Hexagon backend. Each field is a GGML_HEXAGON_*
// variable of upstream with its meaning and default; DefaultOptions gives
// the defaults and OptionsFromEnv reads the environment. Programs may set
// them directly and pass them to NewRegistry.
type Options struct {
	// Lib is libcdsprpc's file or folder (GGML_HEXAGON_LIB); empty: the
	// platform's places.
	Lib string
	// Verbose logs every op, buffer and batch at debug level (VERBOSE).
	Verbose int
	// OpBatch is the most ops in one batch (OPBATCH, 2048).
	OpBatch int
	// OpQueue is the most batches in flight (OPQUEUE, 8).
	OpQueue int
	// OpPoll polls for batch completions instead of blocking up to 1 s
	// per read (OPPOLL).
	OpPoll bool
	// OpFusion fuses ops the DSP computes together (OPFUSION, on).
	OpFusion bool
	// RTRepack repacks weights at run time: 0 off, 1 quantized only, 2
	// always (RT_REPACK, 1).
	RTRepack int
	// OpFilter rejects, in SupportsOp, ops whose description matches
	// (OPFILTER, a case-insensitive regular expression matched against
	// the whole op description).
	OpFilter *regexp.Regexp
	// Profile is the profiling mode: 0 off, 1 basic, 2 PMU counters, 3
	// trace events (PROFILE: a mode, or 8 PMU event ids for mode 2).
	Profile int
	// PMUEvents are the PMU event ids of mode 2.
	PMUEvents [htp.ProfPMUNCnt]uint32
	// ETM turns on ETM tracing (ETM).
	ETM bool
	// NHVX caps the DSP threads (HVX contexts) used; 0 uses all (NHVX).
	NHVX int
	// NHMX enables HMX when not 0 (NHMX, 1).
	NHMX int
	// VTCMSize overrides the VTCM size in bytes; 0 takes the DSP's
	// (VTCM_SIZE, k/m/g suffix, MiB without one).
	VTCMSize uint64
	// MMSelect, FASelect, GDNSelect choose the kernels: 2 HMX then HVX, 1
	// HVX only, 0 none (MM_SELECT, FA_SELECT, GDN_SELECT; 2).
	MMSelect, FASelect, GDNSelect int
	// FASplit splits flash attention over heads and teams (FA_SPLIT, 1).
	FASplit int
	// ARSelect chooses the all-reduce: 2 fused with the ADD, 1 unfused, 0
	// copies and fences (AR_SELECT, 2).
	ARSelect int
	// ARScatter reduce-scatters the fused all-reduce (AR_SCATTER, 1).
	ARScatter int
	// Arch is the Hexagon version (73..85); 0 asks the DSP (ARCH, "v79" or
	// "79").
	Arch int
	// Vmem is the DSP virtual memory for buffer mappings in bytes; 0
	// measures it at session start; Auto: 3200 MiB for arch >= 75, else
	// 3000 MiB (VMEM).
	Vmem int64
	// MbufDyn, MbufStatic and MbufTotal are the largest compute buffer,
	// the largest weight/KV buffer, and the memory reported as the
	// device's (0: unconstrained) (MBUF "dyn,static,total"; 512 MiB, 1 GiB,
	// 0).
	MbufDyn, MbufStatic, MbufTotal uint64
	// OpTrace is the trace events per thread and batch (OPTRACE; default
	// OpBatch*256+131072).
	OpTrace int
	// HostBuf offers the pinned host buffer type (HOSTBUF).
	HostBuf bool
	// DMA64 maps weights with extended (64-bit DMA) mappings: 1 on, 0
	// off, Auto on for arch > 79 (DMA64).
	DMA64 int
	// PowerMode is the power profile (POWER_MODE, burst).
	PowerMode PowerMode
	// MaxSessions caps the devices opened (MAX_SESSIONS, 16, at most 16).
	MaxSessions int
	// Devices are the devices to open (DEVICES, or the deprecated NDEV);
	// empty: HTP0.
	Devices []DeviceConfig
	// ResponseTimeout (Go only, no variable) bounds the wait for one
	// batch's answer before the session is marked failed; 0 is a minute.
	// The real DSP never answers a batch it rejects, so without it a host
	// would hang.
	ResponseTimeout time.Duration
	// Protocol is the wire protocol the DSP library speaks (Go only:
	// GGML_HEXAGON_PROTOCOL, "public" or "fence", also spelt "seed"; public). The C backend is
	// built for one protocol; upstream's own headers are not public, so
	// ProtocolFence is a reconstruction, NOT verified against a real DSP
	// library. Only ProtocolFence has fences: with the public protocol
	// events, copies across cores, groups and the all-reduce are done by
	// the host instead of the DSP (see the package documentation).
	Protocol Protocol
}

// Protocol is the host/DSP wire protocol of a session.
type Protocol = htp.Protocol

// Wire protocols (see htp.Protocol).
const (
	// ProtocolPublic is ggml d99724f's public htp-ops.h, without fences.
	ProtocolPublic = htp.ProtocolPublic
	// ProtocolFence is upstream's fence protocol as reconstructed in
	// testdata/facts/hexagon.md (fences, CPY_FENCE, MDEV_GROUP, ALLREDUCE); NOT verified against a
	// real DSP library.
	ProtocolFence = htp.ProtocolFence
	// ProtocolSeed is the old name of ProtocolFence.
	//
	// Deprecated: use ProtocolFence.
	ProtocolSeed = ProtocolFence
)

// DefaultOptions are upstream's defaults.
func DefaultOptions() Options {
	return Options{
		OpBatch: 2048, OpQueue: 8, OpFusion: true, RTRepack: 1, PMUEvents: htp.DefaultPMUEvents, NHMX: 1,
		MMSelect: 2, FASelect: 2, GDNSelect: 2, FASplit: 1, ARSelect: 2, ARScatter: 1,
		Vmem: Auto, MbufDyn: 512 * MiB, MbufStatic: GiB, OpTrace: 2048*htp.TraceMaxEvents + 131072,
		DMA64: Auto, PowerMode: PowerBurst, MaxSessions: MaxSessions,
		Devices: []DeviceConfig{{Name: "HTP0"}},
	}
}

// EnvPrefix starts every variable of the backend.
const EnvPrefix = "GGML_HEXAGON_"

// OptionsFromEnv returns DefaultOptions changed by the GGML_HEXAGON_*
// variables. Values upstream tolerates with a warning (an unknown power
// mode, a bad PROFILE list, an unreadable device item) are logged and
// ignored as upstream does; a value that is not a number where one is
// needed, a bad size or a bad regular expression is an error naming the
// variable.
func OptionsFromEnv() (Options, error) {
	o, warns, err := ParseEnv(os.Getenv)
	for _, w := range warns {
		slog.Warn("hexagon: " + w)
	}
	return o, err
}

// ParseEnv is OptionsFromEnv reading variables through getenv, with the
// warnings returned instead of logged.
func ParseEnv(getenv func(string) string) (Options, []string, error) {
	o := DefaultOptions()
	p := envParser{getenv: getenv}
	o.Lib = getenv(EnvPrefix + "LIB")
	p.int("VERBOSE", &o.Verbose, 0, 1<<20)
	p.int("OPBATCH", &o.OpBatch, 1, htp.MaxTensors)
	p.int("OPQUEUE", &o.OpQueue, 1, 256)
	o.OpTrace = o.OpBatch*htp.TraceMaxEvents + 131072
	p.int("OPTRACE", &o.OpTrace, 0, 1<<26)
	p.bool("OPPOLL", &o.OpPoll)
	p.bool("OPFUSION", &o.OpFusion)
	p.int("RT_REPACK", &o.RTRepack, 0, 2)
	if s := getenv(EnvPrefix + "OPFILTER"); s != "" {
		re, err := regexp.Compile("^(?i:" + s + ")$")
		if err != nil {
			p.fail("OPFILTER", s, err.Error())
		}
		o.OpFilter = re
	}
	if s := getenv(EnvPrefix + "PROFILE"); s != "" {
		p.profile(s, &o)
	}
	p.bool("ETM", &o.ETM)
	p.int("NHVX", &o.NHVX, 0, 1<<10)
	p.int("NHMX", &o.NHMX, 0, 1<<10)
	p.size("VTCM_SIZE", &o.VTCMSize)
	p.int("MM_SELECT", &o.MMSelect, 0, 2)
	p.int("FA_SELECT", &o.FASelect, 0, 2)
	p.int("FA_SPLIT", &o.FASplit, 0, 1)
	p.int("GDN_SELECT", &o.GDNSelect, 0, 2)
	p.int("AR_SELECT", &o.ARSelect, 0, 2)
	p.int("AR_SCATTER", &o.ARScatter, 0, 1)
	if s := getenv(EnvPrefix + "ARCH"); s != "" {
		v := strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
		n, err := strconv.ParseUint(v, 0, 16)
		switch {
		case err != nil || n == 0:
			p.fail("ARCH", s, "want a Hexagon version such as v79 or 81")
		case n < 73 || n > 85:
			p.warn("GGML_HEXAGON_ARCH v%d is outside v73..v85, the range upstream supports", n)
			o.Arch = int(n)
		default:
			o.Arch = int(n)
		}
	}
	if s := getenv(EnvPrefix + "VMEM"); s != "" {
		var v uint64
		p.size("VMEM", &v)
		o.Vmem = int64(min(v, 1<<62))
	}
	if s := getenv(EnvPrefix + "MBUF"); s != "" {
		parts := strings.SplitN(s, ",", 3)
		for i, dst := range []*uint64{&o.MbufDyn, &o.MbufStatic, &o.MbufTotal} {
			if i >= len(parts) || strings.TrimSpace(parts[i]) == "" {
				continue
			}
			v, err := ParseSize(parts[i])
			if err != nil {
				p.fail("MBUF", s, err.Error())
				continue
			}
			*dst = v
		}
	}
	p.bool("HOSTBUF", &o.HostBuf)
	switch v := strings.ToLower(strings.TrimSpace(getenv(EnvPrefix + "PROTOCOL"))); v {
	case "", "public":
	case "fence", "seed": // seed: the name before the protocol was named for what it adds
		o.Protocol = ProtocolFence
	default:
		p.fail("PROTOCOL", v, "want public or fence")
	}
	if s := getenv(EnvPrefix + "DMA64"); s != "" {
		var on bool
		p.bool("DMA64", &on)
		o.DMA64 = 0
		if on {
			o.DMA64 = 1
		}
	}
	if s := getenv(EnvPrefix + "POWER_MODE"); s != "" {
		m, err := ParsePowerMode(strings.TrimSpace(s))
		if err != nil {
			p.warn("unknown GGML_HEXAGON_POWER_MODE %q, falling back to burst", s)
			m = PowerBurst
		}
		o.PowerMode = m
	}
	p.int("MAX_SESSIONS", &o.MaxSessions, 1, MaxSessions)
	devs := getenv(EnvPrefix + "DEVICES")
	if devs == "" {
		if nd := getenv(EnvPrefix + "NDEV"); nd != "" {
			p.warn("GGML_HEXAGON_NDEV is deprecated: use GGML_HEXAGON_DEVICES")
			devs = nd
		}
	}
	cfgs, warns, err := ParseDevices(devs)
	for _, w := range warns {
		p.warn("GGML_HEXAGON_DEVICES: %s", w)
	}
	if err != nil {
		p.errs = append(p.errs, err)
	} else {
		o.Devices = cfgs
	}
	if len(o.Devices) > o.MaxSessions {
		p.warn("%d devices listed, GGML_HEXAGON_MAX_SESSIONS is %d: the rest are dropped", len(o.Devices), o.MaxSessions)
		o.Devices = o.Devices[:o.MaxSessions]
	}
	return o, p.warnings, p.err()
}

type envParser struct {
	getenv   func(string) string
	warnings []string
	errs     []error
}

func (p *envParser) warn(f string, a ...any) { p.warnings = append(p.warnings, fmt.Sprintf(f, a...)) }

func (p *envParser) fail(name, val, why string) {
	p.errs = append(p.errs, fmt.Errorf("hexagon: %s%s=%q: %s", EnvPrefix, name, val, why))
}

func (p *envParser) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	if len(p.errs) == 1 {
		return p.errs[0]
	}
	msgs := make([]string, len(p.errs))
	for i, e := range p.errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%w (and %d more: %s)", p.errs[0], len(p.errs)-1, strings.Join(msgs[1:], "; "))
}

// int reads a whole number (decimal, or 0x hex as strtoul base 0) within
// [lo, hi].
func (p *envParser) int(name string, dst *int, lo, hi int) {
	s := strings.TrimSpace(p.getenv(EnvPrefix + name))
	if s == "" {
		return
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n < int64(lo) || n > int64(hi) {
		p.fail(name, s, fmt.Sprintf("want a whole number from %d to %d", lo, hi))
		return
	}
	*dst = int(n)
}

// bool reads a number: 0 is off, anything else on (upstream's atoi != 0).
func (p *envParser) bool(name string, dst *bool) {
	s := strings.TrimSpace(p.getenv(EnvPrefix + name))
	if s == "" {
		return
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		p.fail(name, s, "want 0 (off) or 1 (on)")
		return
	}
	*dst = n != 0
}

func (p *envParser) size(name string, dst *uint64) {
	s := p.getenv(EnvPrefix + name)
	if strings.TrimSpace(s) == "" {
		return
	}
	v, err := ParseSize(s)
	if err != nil {
		p.fail(name, s, err.Error())
		return
	}
	*dst = v
}

// profile reads PROFILE: one number, the mode (1 drops the PMU events, 2
// keeps the defaults), or eight PMU event ids (mode 2 with them). Other
// counts turn profiling off, with a warning (upstream's "garbage input").
func (p *envParser) profile(s string, o *Options) {
	var v []uint32
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 0, 32)
		if err != nil {
			p.warn("GGML_HEXAGON_PROFILE %q is not a mode or 8 PMU event ids: profiling off", s)
			o.Profile = 0
			return
		}
		v = append(v, uint32(n))
	}
	switch {
	case len(v) == 1 && v[0] <= htp.ProfTrace:
		o.Profile = int(v[0])
		if o.Profile == htp.ProfBasic {
			o.PMUEvents = [htp.ProfPMUNCnt]uint32{}
		}
	case len(v) == htp.ProfPMUNCnt:
		o.Profile = htp.ProfPMU
		copy(o.PMUEvents[:], v)
	default:
		p.warn("GGML_HEXAGON_PROFILE %q is not a mode (0..3) or 8 PMU event ids: profiling off", s)
		o.Profile = 0
	}
}

// ParseSize reads a size as upstream's parse_size: a number, possibly
// fractional, with an optional k, m or g suffix (powers of 1024, case
// does not matter, a trailing b / ib allowed); MiB without a suffix.
// Negative or unreadable values are errors (upstream reads them as 0).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: want a number with an optional k, m or g suffix", s)
	}
	mult := float64(MiB)
	if unit != "" {
		switch unit[0] {
		case 'k':
			mult = KiB
		case 'm':
			mult = MiB
		case 'g':
			mult = GiB
		default:
			return 0, fmt.Errorf("size %q: unknown unit %q (want k, m or g)", s, unit)
		}
		if rest := unit[1:]; rest != "" && rest != "b" && rest != "ib" {
			return 0, fmt.Errorf("size %q: unknown unit %q (want k, m or g)", s, unit)
		}
	}
	b := v * mult
	if b >= 1<<63 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return uint64(b), nil
}

// resolve fills the arch-dependent defaults for a DSP of the given arch.
func (o Options) resolve(arch int) Options {
	if o.Vmem == Auto {
		o.Vmem = htp.MaxVmemDefault
		if arch < 75 {
			o.Vmem = 3000 * MiB
		}
	}
	// As upstream: extended mappings exist from v81 on only, so DMA64
	// stays off below whatever the option says.
	on := arch > 79 && o.DMA64 != 0
	o.DMA64 = 0
	if on {
		o.DMA64 = 1
	}
	return o
}

package hexagon

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ggml-go/ggml/devices/hexagon/internal/htp"
	"github.com/ggml-go/ggml/internal/envopt"
)

// PowerMode is the DSP power profile asked for at session start:
// upstream's HTP_POWER_MODE_*, sent as its index in upstream's order under
// the fence protocol (the values are not public: NOT verified); the public
// htp_iface start has no power mode (see htp.StartCall).
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
// variable, the value and what is accepted.
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
	warns, err := optionVars.Read(&o, getenv)
	if len(o.Devices) > o.MaxSessions {
		warns = append(warns, fmt.Sprintf("%d devices listed, GGML_HEXAGON_MAX_SESSIONS is %d: the rest are dropped", len(o.Devices), o.MaxSessions))
		o.Devices = o.Devices[:o.MaxSessions]
	}
	return o, warns, err
}

// OptionVariables lists every environment variable ParseEnv reads.
func OptionVariables() []string { return optionVars.Names() }

func intVar(name string, f func(o *Options) *int, lo, hi int) envopt.Var[Options] {
	return envopt.Var[Options]{Name: name, Set: envopt.Int(f, lo, hi)}
}

func boolVar(name string, f func(o *Options) *bool) envopt.Var[Options] {
	return envopt.Var[Options]{Name: name, Set: envopt.Bool(f)}
}

func sizeVar(name string, set func(o *Options, v uint64)) envopt.Var[Options] {
	return envopt.Var[Options]{Name: name, Set: func(o *Options, s string) error {
		if strings.TrimSpace(s) == "" {
			return nil
		}
		v, err := ParseSize(s)
		if err != nil {
			return err
		}
		set(o, v)
		return nil
	}}
}

// optionVars is every GGML_HEXAGON_* variable, in the order upstream's
// ggml_hexagon_init reads them (a later one may use an earlier one's
// value: OPTRACE's default follows OPBATCH, DEVICES replaces the
// deprecated NDEV).
var optionVars = &envopt.Table[Options]{Device: "hexagon", Prefix: EnvPrefix, Vars: []envopt.Var[Options]{
	{Name: "LIB", Set: envopt.String(func(o *Options) *string { return &o.Lib })},
	intVar("VERBOSE", func(o *Options) *int { return &o.Verbose }, 0, 1<<20),
	{Name: "OPBATCH", Set: func(o *Options, v string) error {
		if err := envopt.Int(func(o *Options) *int { return &o.OpBatch }, 1, htp.MaxTensors)(o, v); err != nil {
			return err
		}
		o.OpTrace = o.OpBatch*htp.TraceMaxEvents + 131072
		return nil
	}},
	intVar("OPQUEUE", func(o *Options) *int { return &o.OpQueue }, 1, 256),
	intVar("OPTRACE", func(o *Options) *int { return &o.OpTrace }, 0, 1<<26),
	boolVar("OPPOLL", func(o *Options) *bool { return &o.OpPoll }),
	boolVar("OPFUSION", func(o *Options) *bool { return &o.OpFusion }),
	intVar("RT_REPACK", func(o *Options) *int { return &o.RTRepack }, 0, 2),
	{Name: "OPFILTER", Set: func(o *Options, s string) error {
		re, err := regexp.Compile("^(?i:" + s + ")$")
		if err != nil {
			return fmt.Errorf("want a regular expression: %w", err)
		}
		o.OpFilter = re
		return nil
	}},
	{Name: "PROFILE", Set: parseProfile},
	boolVar("ETM", func(o *Options) *bool { return &o.ETM }),
	intVar("NHVX", func(o *Options) *int { return &o.NHVX }, 0, 1<<10),
	intVar("NHMX", func(o *Options) *int { return &o.NHMX }, 0, 1<<10),
	sizeVar("VTCM_SIZE", func(o *Options, v uint64) { o.VTCMSize = v }),
	intVar("MM_SELECT", func(o *Options) *int { return &o.MMSelect }, 0, 2),
	intVar("FA_SELECT", func(o *Options) *int { return &o.FASelect }, 0, 2),
	intVar("FA_SPLIT", func(o *Options) *int { return &o.FASplit }, 0, 1),
	intVar("GDN_SELECT", func(o *Options) *int { return &o.GDNSelect }, 0, 2),
	intVar("AR_SELECT", func(o *Options) *int { return &o.ARSelect }, 0, 2),
	intVar("AR_SCATTER", func(o *Options) *int { return &o.ARScatter }, 0, 1),
	{Name: "ARCH", Set: func(o *Options, s string) error {
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V"), 0, 16)
		if err != nil || n == 0 {
			return errors.New("want a Hexagon version such as v79 or 81")
		}
		o.Arch = int(n)
		if n < 73 || n > 85 {
			return envopt.Warnf("GGML_HEXAGON_ARCH v%d is outside v73..v85, the range upstream supports", n)
		}
		return nil
	}},
	sizeVar("VMEM", func(o *Options, v uint64) { o.Vmem = int64(min(v, 1<<62)) }),
	{Name: "MBUF", Set: func(o *Options, s string) error {
		parts := strings.SplitN(s, ",", 3)
		for i, dst := range []*uint64{&o.MbufDyn, &o.MbufStatic, &o.MbufTotal} {
			if i >= len(parts) || strings.TrimSpace(parts[i]) == "" {
				continue
			}
			v, err := ParseSize(parts[i])
			if err != nil {
				return fmt.Errorf("want dyn,static,total sizes: %w", err)
			}
			*dst = v
		}
		return nil
	}},
	boolVar("HOSTBUF", func(o *Options) *bool { return &o.HostBuf }),
	{Name: "PROTOCOL", Set: func(o *Options, s string) error {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "", "public":
			o.Protocol = ProtocolPublic
		case "fence", "seed": // seed: the name before the protocol was named for what it adds
			o.Protocol = ProtocolFence
		default:
			return errors.New("want public or fence")
		}
		return nil
	}},
	{Name: "DMA64", Set: func(o *Options, s string) error {
		var on bool
		if err := envopt.Bool(func(*Options) *bool { return &on })(o, s); err != nil {
			return err
		}
		o.DMA64 = 0
		if on {
			o.DMA64 = 1
		}
		return nil
	}},
	{Name: "POWER_MODE", Set: func(o *Options, s string) error {
		m, err := ParsePowerMode(strings.TrimSpace(s))
		o.PowerMode = m
		if err != nil {
			o.PowerMode = PowerBurst
			return envopt.Warnf("unknown GGML_HEXAGON_POWER_MODE %q, falling back to burst", s)
		}
		return nil
	}},
	intVar("MAX_SESSIONS", func(o *Options) *int { return &o.MaxSessions }, 1, MaxSessions),
	{Name: "NDEV", Set: func(o *Options, s string) error {
		err := setDevices(o, s)
		var w envopt.Warning
		if err != nil && !errors.As(err, &w) {
			return err
		}
		return append(envopt.Warning{"GGML_HEXAGON_NDEV is deprecated: use GGML_HEXAGON_DEVICES"}, w...)
	}},
	{Name: "DEVICES", Set: setDevices},
}}

// setDevices reads a DEVICES list; items upstream skips are warnings.
func setDevices(o *Options, s string) error {
	cfgs, warns, err := ParseDevices(s)
	if err != nil {
		// The table names the variable and the value; keep the reason.
		return errors.New(strings.TrimPrefix(err.Error(), "hexagon: "))
	}
	o.Devices = cfgs
	if len(warns) == 0 {
		return nil
	}
	w := make(envopt.Warning, len(warns))
	for i, m := range warns {
		w[i] = "GGML_HEXAGON_DEVICES: " + m
	}
	return w
}

// parseProfile reads PROFILE: one number, the mode (1 drops the PMU events, 2
// keeps the defaults), or eight PMU event ids (mode 2 with them). Other
// counts turn profiling off, with a warning (upstream's "garbage input").
func parseProfile(o *Options, s string) error {
	var v []uint32
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 0, 32)
		if err != nil {
			o.Profile = 0
			return envopt.Warnf("GGML_HEXAGON_PROFILE %q is not a mode or 8 PMU event ids: profiling off", s)
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
		o.Profile = 0
		return envopt.Warnf("GGML_HEXAGON_PROFILE %q is not a mode (0..3) or 8 PMU event ids: profiling off", s)
	}
	return nil
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

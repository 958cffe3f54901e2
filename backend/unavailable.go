package backend

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// ReasonKind says why a device cannot be used.
type ReasonKind int

// Reasons a device is unavailable.
const (
	// LibraryNotFound: no file of the native library was found; Reason.Tried
	// lists where it was looked for.
	LibraryNotFound ReasonKind = iota
	// LibraryLoadFailed: the library was found but the system loader
	// refused it (wrong architecture, a missing dependency).
	LibraryLoadFailed
	// SymbolMissing: the library lacks a function the device needs.
	SymbolMissing
	// VersionTooOld: the library is older than the device supports.
	VersionTooOld
	// InitFailed: the library loaded but initializing the device failed
	// (no hardware, a driver error).
	InitFailed
)

var reasonNames = [...]string{"library not found", "library failed to load", "symbol missing", "version too old", "init failed"}

func (k ReasonKind) String() string {
	if k >= 0 && int(k) < len(reasonNames) {
		return reasonNames[k]
	}
	return fmt.Sprintf("ReasonKind(%d)", int(k))
}

// Sentinels for the reason kinds, wrapped by a Reason and by the errors of
// an unavailable device.
var (
	ErrLibraryNotFound   = errors.New("library not found")
	ErrLibraryLoadFailed = errors.New("library failed to load")
	ErrSymbolMissing     = errors.New("symbol missing")
	ErrVersionTooOld     = errors.New("version too old")
	ErrInitFailed        = errors.New("init failed")
)

var reasonErrs = [...]error{ErrLibraryNotFound, ErrLibraryLoadFailed, ErrSymbolMissing, ErrVersionTooOld, ErrInitFailed}

// Reason is why a device is unavailable, with what a user needs to fix it.
// It is an error wrapping the kind's sentinel (ErrLibraryNotFound, ...) and
// Err.
type Reason struct {
	Kind ReasonKind
	// Library is the library's name or path.
	Library string
	// Tried lists every path searched for the library, in order.
	Tried []string
	// Symbol is the missing symbol (SymbolMissing).
	Symbol string
	// Version is the library's version and MinVersion the oldest one the
	// device supports (VersionTooOld).
	Version, MinVersion string
	// Err is the underlying error, if any.
	Err error
}

// Error describes the reason on one line.
func (r Reason) Error() string {
	var b strings.Builder
	b.WriteString(r.Kind.String())
	if r.Library != "" {
		fmt.Fprintf(&b, ": %s", r.Library)
	}
	switch r.Kind {
	case SymbolMissing:
		if r.Symbol != "" {
			fmt.Fprintf(&b, " lacks %s", r.Symbol)
		}
	case VersionTooOld:
		fmt.Fprintf(&b, " is version %s, need %s or newer", r.Version, r.MinVersion)
	}
	if len(r.Tried) > 0 {
		fmt.Fprintf(&b, " (searched %s)", strings.Join(r.Tried, ", "))
	}
	if r.Err != nil {
		fmt.Fprintf(&b, ": %v", r.Err)
	}
	return b.String()
}

// Unwrap gives the kind's sentinel and Err.
func (r Reason) Unwrap() []error {
	errs := []error{}
	if r.Kind >= 0 && int(r.Kind) < len(reasonErrs) {
		errs = append(errs, reasonErrs[r.Kind])
	}
	if r.Err != nil {
		errs = append(errs, r.Err)
	}
	return errs
}

// Unavailable is a device that is listed but cannot be used, and why. It
// implements Device: it supports nothing, has no buffer type, and Init
// returns an error wrapping ErrUnavailable and its Reason.
type Unavailable struct {
	name, description string
	typ               DeviceType
	// Reason is why the device cannot be used.
	Reason Reason
}

// NewUnavailable returns the listing of a device that cannot be used.
func NewUnavailable(name, description string, typ DeviceType, reason Reason) *Unavailable {
	return &Unavailable{name: name, description: description, typ: typ, Reason: reason}
}

// Name is the name the device would have.
func (u *Unavailable) Name() string { return u.name }

// Description describes the device that would be there.
func (u *Unavailable) Description() string { return u.description }

// Memory is unknown: 0, 0.
func (u *Unavailable) Memory() (free, total uint64) { return 0, 0 }

// Type is the type the device would have.
func (u *Unavailable) Type() DeviceType { return u.typ }

// Props has the name, description and type; no memory, no caps.
func (u *Unavailable) Props() Props {
	return Props{Name: u.name, Description: u.description, Type: u.typ}
}

// BufferType is nil.
func (u *Unavailable) BufferType() buffer.Type { return nil }

// SupportsOp is false.
func (u *Unavailable) SupportsOp(*graph.Tensor) bool { return false }

// SupportsBufferType is false.
func (u *Unavailable) SupportsBufferType(buffer.Type) bool { return false }

// OffloadOp is false.
func (u *Unavailable) OffloadOp(*graph.Tensor) bool { return false }

// Init fails with the reason.
func (u *Unavailable) Init(Options) (Backend, error) { return nil, u.Err() }

// Err is the error of using the device: ErrUnavailable and the Reason.
func (u *Unavailable) Err() error {
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, u.name, u.Reason)
}

// Availability is nil for a usable device, or the error, wrapping
// ErrUnavailable, of one that is not: one listed as *Unavailable (the
// error wraps its Reason), or one that reports a failure of its own
// through an Err method, as an RPC device whose server was lost does (the
// error wraps that failure).
func Availability(d Device) error {
	switch u := d.(type) {
	case *Unavailable:
		return u.Err()
	case interface{ Err() error }:
		if err := u.Err(); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUnavailable, d.Name(), err)
		}
	}
	return nil
}

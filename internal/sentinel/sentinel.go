// Package sentinel makes the module's package-specific sentinel errors match
// the general ones they are a case of, so one errors.Is test covers every
// package: errors.Is(err, errors.ErrUnsupported) (re-exported as
// backend.ErrUnsupported) is true for quant's, buffer's, cpu's and the
// mirror's unsupported errors alike, while each keeps its own message and
// can still be told apart.
package sentinel

import "slices"

// Error is a sentinel error with its own message that errors.Is also
// matches to each of its kinds. It wraps nothing, so messages do not repeat.
type Error struct {
	msg   string
	kinds []error
}

// New returns a sentinel with message msg that is also each of kinds.
func New(msg string, kinds ...error) *Error { return &Error{msg: msg, kinds: kinds} }

// Error returns the message.
func (e *Error) Error() string { return e.msg }

// Is reports whether target is one of e's kinds (errors.Is calls it).
func (e *Error) Is(target error) bool { return slices.Contains(e.kinds, target) }

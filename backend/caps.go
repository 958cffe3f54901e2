package backend

import (
	"errors"
	"fmt"
)

// CheckCaps reports whether d's Caps agree with the optional interfaces
// it implements: HostBuffer with HostBufferTyper, BufferFromHostPtr with
// HostMemoryBufferer, Events with EventCreator. Callers decide from
// either (the scheduler asks for both before it makes events), so a device
// whose two answers disagree is wrong whichever a caller trusts. The error
// wraps ErrArgument and lists every disagreement.
func CheckCaps(d Device) error {
	if _, ok := d.(*Unavailable); ok {
		return nil
	}
	caps := d.Props().Caps
	var errs []error
	check := func(name string, capSet, implemented bool, iface string) {
		if capSet != implemented {
			errs = append(errs, fmt.Errorf("%w: %s: Caps.%s is %v but the device %s %s", ErrArgument, d.Name(), name, capSet,
				map[bool]string{true: "implements", false: "does not implement"}[implemented], iface))
		}
	}
	hb, ok := d.(HostBufferTyper)
	check("HostBuffer", caps.HostBuffer, ok && hb.HostBufferType() != nil, "HostBufferTyper (with a buffer type)")
	_, ok = d.(HostMemoryBufferer)
	check("BufferFromHostPtr", caps.BufferFromHostPtr, ok, "HostMemoryBufferer")
	_, ok = d.(EventCreator)
	check("Events", caps.Events, ok, "EventCreator")
	return errors.Join(errs...)
}

package backend

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// registrySet is the list of registries; the process has one (std), tests
// make their own.
type registrySet struct {
	mu   sync.Mutex
	regs []Registry
}

var std registrySet

// Register adds a registry to the process's list; device packages call it
// from init. A nil registry, or a name already registered (case does not
// matter, as device names), is an error.
func Register(r Registry) error { return std.register(r) }

// Registries lists the registered registries in registration order.
func Registries() []Registry { return std.registries() }

// Devices lists the devices of every registry, in registration order,
// unavailable ones included.
func Devices() []Device { return std.devices() }

// DeviceByName returns the device named name (case does not matter),
// available or not.
func DeviceByName(name string) (Device, error) { return std.byName(name) }

// DeviceByType returns the first available device of type t
// (ggml_backend_dev_by_type).
func DeviceByType(t DeviceType) (Device, error) { return std.byType(t) }

// DevicesOfType lists the devices of type t, unavailable ones included,
// without discovering the devices of a registry whose TypeHinter says
// they are of another type.
func DevicesOfType(t DeviceType) []Device { return std.ofType(t) }

// Init starts a backend chosen by opts: the first of opts.Devices that is
// available and starts, or, with no list, the best device by type (a GPU,
// else an integrated GPU, else the CPU, as ggml_backend_init_best). The
// error says why each device tried could not be used.
func Init(opts Options) (Backend, error) { return std.init(opts) }

// InitBest starts the backend chosen by GGML_DEVICE, or the best device by
// type when it is unset (ggml_backend_init_best, with run-time selection).
func InitBest() (Backend, error) {
	opts, err := OptionsFromEnv()
	if err != nil {
		return nil, err
	}
	return Init(opts)
}

func (s *registrySet) register(r Registry) error {
	if r == nil {
		return fmt.Errorf("%w: nil registry", ErrArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.regs {
		if strings.EqualFold(o.Name(), r.Name()) {
			return fmt.Errorf("%w: registry %q", ErrDuplicate, r.Name())
		}
	}
	s.regs = append(s.regs, r)
	return nil
}

func (s *registrySet) registries() []Registry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Registry(nil), s.regs...)
}

// devices asks each registry outside the lock: discovery may load
// libraries and take time, and must not block registration.
func (s *registrySet) devices() []Device {
	var ds []Device
	for _, r := range s.registries() {
		for _, d := range r.Devices() {
			if d != nil {
				ds = append(ds, d)
			}
		}
	}
	return ds
}

func (s *registrySet) ofType(t DeviceType) []Device {
	var ds []Device
	for _, r := range s.registries() {
		if h, ok := r.(TypeHinter); ok {
			if ht, known := h.DeviceTypeHint(); known && ht != t {
				continue
			}
		}
		for _, d := range r.Devices() {
			if d != nil && d.Type() == t {
				ds = append(ds, d)
			}
		}
	}
	return ds
}

func (s *registrySet) byName(name string) (Device, error) {
	for _, d := range s.devices() {
		if strings.EqualFold(d.Name(), name) {
			return d, nil
		}
	}
	return nil, fmt.Errorf("%w: %q (have %s)", ErrNotFound, name, names(s.devices()))
}

func (s *registrySet) byType(t DeviceType) (Device, error) {
	var why []error
	for _, d := range s.ofType(t) {
		if err := Availability(d); err != nil {
			why = append(why, err)
			continue
		}
		return d, nil
	}
	if len(why) == 0 {
		// errors.Join of nothing is nil, which %w would print as %!w(<nil>).
		return nil, fmt.Errorf("%w: no %s device is registered (have %s)", ErrNotFound, t, names(s.devices()))
	}
	return nil, fmt.Errorf("%w: no available %s device: %w", ErrNotFound, t, errors.Join(why...))
}

func (s *registrySet) init(opts Options) (Backend, error) {
	if err := CheckThreads(opts.Threads); err != nil {
		return nil, fmt.Errorf("backend: Options.Threads: %w", err)
	}
	var why []error
	try := func(d Device) (Backend, bool) {
		b, err := d.Init(opts)
		if err == nil {
			Logger().Info("backend: started", "device", d.Name(), "type", d.Type().String(), "threads", opts.Threads)
			return b, true
		}
		Logger().Info("backend: device did not start", "device", d.Name(), "err", err)
		why = append(why, fmt.Errorf("%s: %w", d.Name(), err))
		return nil, false
	}
	if len(opts.Devices) > 0 {
		for _, name := range opts.Devices {
			d, err := s.byName(name)
			if err != nil {
				why = append(why, err)
				continue
			}
			if b, ok := try(d); ok {
				return b, nil
			}
		}
		return nil, fmt.Errorf("backend: none of %s could start: %w", strings.Join(opts.Devices, ","), errors.Join(why...))
	}
	for _, t := range []DeviceType{DeviceGPU, DeviceIGPU, DeviceCPU} {
		for _, d := range s.ofType(t) {
			if Availability(d) != nil {
				continue
			}
			if b, ok := try(d); ok {
				return b, nil
			}
		}
	}
	if len(why) == 0 {
		return nil, fmt.Errorf("%w: no available GPU, IGPU or CPU device (have %s)", ErrNotFound, names(s.devices()))
	}
	return nil, fmt.Errorf("backend: no device could start: %w", errors.Join(why...))
}

func names(ds []Device) string {
	if len(ds) == 0 {
		return "none"
	}
	ns := make([]string, len(ds))
	for i, d := range ds {
		ns[i] = d.Name()
	}
	return strings.Join(ns, ", ")
}

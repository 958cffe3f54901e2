package fastrpc

// Domains (remote.h): the static ids and names of the single-NSP world.
const (
	DomainADSP  = 0
	DomainMDSP  = 1
	DomainSDSP  = 2
	DomainCDSP  = 3
	DomainCDSP1 = 4
)

// Request ids of remote_handle_control / remote_handle64_control
// (handle_control_req_id).
const (
	ControlLatency = 1 // DSPRPC_CONTROL_LATENCY
	GetDSPInfo     = 2 // DSPRPC_GET_DSP_INFO
)

// Request ids of remote_session_control (session_control_req_id).
const (
	ControlUnsignedModule = 2  // DSPRPC_CONTROL_UNSIGNED_MODULE
	ReserveNewSession     = 13 // FASTRPC_RESERVE_NEW_SESSION
	GetEffectiveDomainID  = 14 // FASTRPC_GET_EFFECTIVE_DOMAIN_ID
	GetURI                = 15 // FASTRPC_GET_URI
)

// AttrArchVer is remote_dsp_attributes ARCH_VER: the DSP's Hexagon
// version in the low byte (0x73, 0x81).
const AttrArchVer = 6

// RPCPMQoS is remote_rpc_latency_flags RPC_PM_QOS.
const RPCPMQoS = 1

// fastrpc_map_flags.
const (
	MapFD                = 2  // FASTRPC_MAP_FD: pinned, mapped now
	MapFDDelayed         = 3  // FASTRPC_MAP_FD_DELAYED: the DSP maps it when used
	MapFDExtended        = 17 // SDK >= 6.4 only; not verified
	MapFDDelayedExtended = 18 // DMA64 / extended VA, SDK >= 6.4 only; not verified
)

// rpcmem heap and flags (rpcmem.h).
const (
	HeapIDSystem = 25
	DefaultFlags = 1 // RPCMEM_DEFAULT_FLAGS
)

// dspqueue buffer flags.
const (
	BufferFlagFlushSender         = 0x10
	BufferFlagInvalidateRecipient = 0x80
)

// Timeouts of dspqueue_read/write in microseconds.
const (
	QueueTimeout     = 1000000    // DSPQUEUE_TIMEOUT of htp-drv.h (Linux/Android)
	QueueTimeoutNone = 0xffffffff // DSPQUEUE_TIMEOUT_NONE
)

// RemoteBuf is remote_buf (16 bytes), the buffer member of union
// remote_arg, whose array stride is also 16 bytes.
type RemoteBuf struct {
	Pv   uintptr
	NLen uintptr
}

// ControlLatencyArg is struct remote_rpc_control_latency (8 bytes).
type ControlLatencyArg struct {
	Enable  uint32
	Latency uint32
}

// DSPCapability is struct remote_dsp_capability (12 bytes).
type DSPCapability struct {
	Domain      uint32
	AttributeID uint32
	Capability  uint32
}

// UnsignedModuleArg is struct remote_rpc_control_unsigned_module (8 bytes).
type UnsignedModuleArg struct {
	Domain int32
	Enable int32
}

// ReserveNewSessionArg is struct remote_rpc_reserve_new_session (40
// bytes). The name pointers point at NUL-terminated C strings; lengths
// exclude the NUL.
type ReserveNewSessionArg struct {
	DomainName        uintptr
	DomainNameLen     uint32
	_                 uint32
	SessionName       uintptr
	SessionNameLen    uint32
	EffectiveDomainID uint32 // out
	SessionID         uint32 // out
	_                 uint32
}

// EffectiveDomainIDArg is struct remote_rpc_effective_domain_id (24 bytes).
type EffectiveDomainIDArg struct {
	DomainName        uintptr
	DomainNameLen     uint32
	SessionID         uint32
	EffectiveDomainID uint32 // out
	_                 uint32
}

// GetURIArg is struct remote_rpc_get_uri (48 bytes). URI is the caller's
// buffer of URILen bytes, which must exceed ModuleURILen.
type GetURIArg struct {
	DomainName    uintptr
	DomainNameLen uint32
	SessionID     uint32
	ModuleURI     uintptr
	ModuleURILen  uint32
	_             uint32
	URI           uintptr
	URILen        uint32
	_             uint32
}

// QueueBuffer is struct dspqueue_buffer (24 bytes).
type QueueBuffer struct {
	FD     uint32
	Size   uint32
	Offset uint32
	Flags  uint32
	Ptr    uint64
}

// Domain discovery (remote_system_request with FASTRPC_GET_DOMAINS): not
// in any public header; the 96-byte fastrpc_domain of Qualcomm's test
// stub, which agrees with a device log. Not verified against a real
// library.
const (
	SysGetDomains = 0 // FASTRPC_GET_DOMAINS
	DomainTypeNSP = 1 // FASTRPC_NSP
)

// DomainInfo is struct fastrpc_domain (96 bytes, not verified).
type DomainInfo struct {
	ID         int32
	InstanceID int32
	Name       [30]byte
	_          [2]byte
	Type       int32
	Status     int32
	Card       uint32
	SocID      uint32
	Reserved   [10]uint32
}

// DomainsInfo is struct fastrpc_domains_info (24 bytes, not verified).
type DomainsInfo struct {
	Domains    uintptr
	MaxDomains int32
	NumDomains int32
	Flags      uint64 // DOMAINS_LIST_FLAGS_SET_TYPE(0, type) = type & 31
}

// SystemRequest is struct system_req_payload (32 bytes, not verified).
type SystemRequest struct {
	ID  uint32
	_   uint32
	Sys DomainsInfo
}

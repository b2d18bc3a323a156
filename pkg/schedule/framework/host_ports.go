package framework

import corev1 "k8s.io/api/core/v1"

// DefaultBindAllHostIP is the host IP a port without one binds.
const DefaultBindAllHostIP = "0.0.0.0"

// ProtocolPort is a protocol and a port.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

// HostPortInfo records the host ports in use on a node: IP -> protocol/port.
type HostPortInfo map[string]map[ProtocolPort]struct{}

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = DefaultBindAllHostIP
	}
	if protocol == "" {
		protocol = string(corev1.ProtocolTCP)
	}
	return ip, protocol
}

// Add records a port.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if h[ip] == nil {
		h[ip] = map[ProtocolPort]struct{}{}
	}
	h[ip][ProtocolPort{protocol, port}] = struct{}{}
}

// Remove forgets a port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if m, ok := h[ip]; ok {
		delete(m, ProtocolPort{protocol, port})
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// Len counts the ports in use.
func (h HostPortInfo) Len() int {
	n := 0
	for _, m := range h {
		n += len(m)
	}
	return n
}

// CheckConflict reports whether a port is taken: 0.0.0.0 conflicts with the
// same protocol and port on any IP, and any IP with 0.0.0.0.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if ip == DefaultBindAllHostIP {
		for _, m := range h {
			if _, ok := m[pp]; ok {
				return true
			}
		}
		return false
	}
	for _, key := range []string{DefaultBindAllHostIP, ip} {
		if _, ok := h[key][pp]; ok {
			return true
		}
	}
	return false
}

// Clone copies the ports.
func (h HostPortInfo) Clone() HostPortInfo {
	out := make(HostPortInfo, len(h))
	for ip, m := range h {
		c := make(map[ProtocolPort]struct{}, len(m))
		for k := range m {
			c[k] = struct{}{}
		}
		out[ip] = c
	}
	return out
}

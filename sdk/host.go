package sdk

import (
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/go-plugin"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// hostConn is the plugin's connection to the host's services, dialed through
// go-plugin's broker on first use and then kept.
type hostConn struct {
	mu     sync.Mutex
	broker *plugin.GRPCBroker
	client exocortexv1.HostClient
}

func (s *server) useBroker(b *plugin.GRPCBroker) {
	s.host.mu.Lock()
	s.host.broker = b
	s.host.mu.Unlock()
}

func (h *hostConn) get() (exocortexv1.HostClient, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client != nil {
		return h.client, nil
	}
	if h.broker == nil {
		return nil, errors.New("the host's services are not reachable: the plugin was not started by an Exocortex host")
	}
	conn, err := h.broker.Dial(uint32(exocortexv1.HostBroker_HOST_BROKER_ID))
	if err != nil {
		return nil, fmt.Errorf("dialing the host's services: %w", err)
	}
	h.client = exocortexv1.NewHostClient(conn)
	return h.client, nil
}

// Host returns a client for the services the host offers its plugins (running a
// subordinate agent, for one). The connection is made on first use.
func (c *Call) Host() (exocortexv1.HostClient, error) {
	if c.host == nil {
		return nil, errors.New("the host's services are not reachable from this call")
	}
	return c.host.get()
}

package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	// memory is the host's MemoryService, on the same connection.
	memory exocortexv1.MemoryServiceClient
	err    error // the dial failed: it is not tried again
}

// UseBroker (protocol.BrokerUser) keeps the broker and dials the host's services at once: go-plugin
// keeps the host's announcement of a service for five seconds only, so a
// plugin that first asked for them later (a tool reporting its output minutes
// into a session) would never reach them.
func (s *server) UseBroker(b *plugin.GRPCBroker) {
	s.host.mu.Lock()
	s.host.broker = b
	s.host.mu.Unlock()
	go func() { _, _ = s.host.get() }()
}

func (h *hostConn) get() (exocortexv1.HostClient, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client != nil || h.err != nil {
		return h.client, h.err
	}
	if h.broker == nil {
		return nil, errors.New("the host's services are not reachable: the plugin was not started by an Exocortex host")
	}
	conn, err := h.broker.Dial(uint32(exocortexv1.HostBroker_HOST_BROKER_ID))
	if err != nil {
		h.err = fmt.Errorf("dialing the host's services (the host did not offer them when the plugin started): %w", err)
		return nil, h.err
	}
	h.client = exocortexv1.NewHostClient(conn)
	h.memory = exocortexv1.NewMemoryServiceClient(conn)
	return h.client, nil
}

// memoryClient is the host's memory service, dialed as get dials.
func (h *hostConn) memoryClient() (exocortexv1.MemoryServiceClient, error) {
	if _, err := h.get(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.memory, nil
}

// Host returns a client for the services the host offers its plugins (running a
// subordinate agent, for one). The connection is made on first use.
func (c *Call) Host() (exocortexv1.HostClient, error) {
	if c.host == nil {
		return nil, errors.New("the host's services are not reachable from this call")
	}
	return c.host.get()
}

// ReportOutput reports a piece of partial output of the tool call c belongs
// to, while the tool runs: the host fires tool_output_update with it and shows
// it to the operator. It returns what the operator was shown of the output so
// far (the extensions may mask or shorten it); the tool's result is not
// changed by it.
func (c *Call) ReportOutput(ctx context.Context, delta string) (string, error) {
	h, err := c.Host()
	if err != nil {
		return "", err
	}
	resp, err := h.ReportToolOutput(ctx, &exocortexv1.ReportToolOutputRequest{Context: c.Context(), Delta: delta})
	if err != nil {
		return "", fmt.Errorf("reporting the output of tool call %s: %w", c.Context().GetContextId(), err)
	}
	return resp.GetDisplay(), nil
}

// ReportEmbeddingModelChanged reports that the memory store in dir was built
// with the model oldModel (oldDims dimensions) and is now re-embedded with
// newModel: the host fires embedding_model_changed.
func (c *Call) ReportEmbeddingModelChanged(ctx context.Context, dir, oldModel string, oldDims int, newModel string, newDims int) error {
	h, err := c.Host()
	if err != nil {
		return err
	}
	_, err = h.ReportEmbeddingModelChanged(ctx, &exocortexv1.ReportEmbeddingModelChangedRequest{Context: c.Context(), Store: dir,
		OldModel: oldModel, OldDims: int32(oldDims), NewModel: newModel, NewDims: int32(newDims)})
	if err != nil {
		return fmt.Errorf("reporting the embedding model change of %s: %w", dir, err)
	}
	return nil
}

// UtilityCall is one completion asked of the host's utility model.
type UtilityCall struct {
	// System is the system prompt, Message the user message.
	System, Message string
	// Purpose is what util_model_call_before/after see as the call's purpose
	// ("" is "plugin:<the plugin's name>").
	Purpose string
	// OnDelta, when set, receives each piece of the model's text as it
	// arrives (before util_model_call_after; the returned response is after
	// it). An error from it ends the call with that error.
	OnDelta func(delta string) error
}

// CallUtilityModel runs one completion of the host's utility model (the
// model of history compression; the chat model when none is configured),
// with the hooks util_model_call_before and util_model_call_after around it,
// and returns the response as the extensions at util_model_call_after left
// it. It is Agent Zero's agent.call_utility_model. The plugin must declare
// Plugin.UsesUtilityModel; the host bounds the call (a deadline, calls at
// once and per minute, the prompt's size) and says which bound refused it.
// ctx's deadline (the calling extension's) applies too.
func (c *Call) CallUtilityModel(ctx context.Context, u UtilityCall) (string, error) {
	h, err := c.Host()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(ctx) // ends the stream when we stop reading it
	defer cancel()
	stream, err := h.CallUtilityModel(ctx, &exocortexv1.CallUtilityModelRequest{Context: c.Context(), System: u.System,
		Message: u.Message, Purpose: u.Purpose, Stream: u.OnDelta != nil})
	if err != nil {
		return "", fmt.Errorf("calling the utility model: %w", err)
	}
	for {
		r, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the host ended the reply without an answer")
			}
			return "", fmt.Errorf("calling the utility model: %w", err)
		}
		if r.GetDone() {
			return r.GetResponse(), nil
		}
		if u.OnDelta != nil {
			if err := u.OnDelta(r.GetDelta()); err != nil {
				return "", fmt.Errorf("calling the utility model: the delta handler: %w", err)
			}
		}
	}
}

// SettingSecret returns the value of a secret setting of config.yaml (e.g.
// "tools.web_search.api_key"), "" when the operator has not set it, from the
// host, which answers only a key the plugin declares (Plugin.SettingSecrets).
// Keep the value in the call that needs it: the host masks it in everything
// else, so a value repeated in a result or a log line reaches no one.
func (c *Call) SettingSecret(ctx context.Context, key string) (string, error) {
	h, err := c.Host()
	if err != nil {
		return "", fmt.Errorf("the secret setting %s: %w", key, err)
	}
	resp, err := h.GetSettingSecret(ctx, &exocortexv1.GetSettingSecretRequest{Key: key})
	if err != nil {
		return "", fmt.Errorf("the secret setting %s: %w", key, err)
	}
	return resp.GetValue(), nil
}

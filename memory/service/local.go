package service

import (
	"context"

	"google.golang.org/grpc"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The owner's own reads. While this process owns the store, Search, Compile
// and Get are answered by the owner's Server in this process, the very code a
// socket's caller reaches, without encoding the request and the hits,
// framing them over HTTP/2 and crossing the socket twice (at 100k records that
// round trip cost about a third of a search over exocortex serve). Nothing
// else changes: the same store answers, with the same statuses, and a read
// puts nothing in the journal whose order the socket would keep (a search
// that records access writes through the store's own lock, as it does for a
// socket's caller). The answer is the caller's: the store hands out copies of
// its records. Every other call, and every call of a process that is not the
// owner, goes through the socket.

// local is the owner's Server and a hold on it that Close waits for, or nil
// and a no-op release when this process is not the owner.
func (c *Client) local() (*Server, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.own == nil || c.own.server == nil {
		return nil, func() {}
	}
	c.own.calls.Add(1)
	return c.own.server, c.own.calls.Done
}

// Search is MemoryService.Search, answered in this process while it owns the store.
func (c *Client) Search(ctx context.Context, in *exocortexv1.MemorySearchRequest, opts ...grpc.CallOption) (*exocortexv1.MemorySearchResponse, error) {
	s, done := c.local()
	defer done()
	if s == nil {
		return c.MemoryServiceClient.Search(ctx, in, opts...)
	}
	return s.Search(ctx, in)
}

// Compile is MemoryService.Compile, answered in this process while it owns the store.
func (c *Client) Compile(ctx context.Context, in *exocortexv1.MemoryCompileRequest, opts ...grpc.CallOption) (*exocortexv1.MemoryCompileResponse, error) {
	s, done := c.local()
	defer done()
	if s == nil {
		return c.MemoryServiceClient.Compile(ctx, in, opts...)
	}
	return s.Compile(ctx, in)
}

// Get is MemoryService.Get, answered in this process while it owns the store.
func (c *Client) Get(ctx context.Context, in *exocortexv1.MemoryGetRequest, opts ...grpc.CallOption) (*exocortexv1.MemoryGetResponse, error) {
	s, done := c.local()
	defer done()
	if s == nil {
		return c.MemoryServiceClient.Get(ctx, in, opts...)
	}
	return s.Get(ctx, in)
}

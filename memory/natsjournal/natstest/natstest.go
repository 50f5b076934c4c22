// Package natstest runs a real nats-server with JetStream inside a test
// process: on a random loopback port, its store in a temporary directory,
// stopped at the end of the test. It can be shut down and started again on
// the same port and store (a server restart), which is what the fault tests
// of the shared memory journal need.
package natstest

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is an embedded nats-server.
type Server struct {
	t    testing.TB
	opts server.Options
	srv  *server.Server
}

// Start starts a JetStream server on a free loopback port; it is shut down
// when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	port := freePort(t)
	s := &Server{t: t, opts: server.Options{
		ServerName: "exo-test",
		Host:       "127.0.0.1",
		Port:       port,
		JetStream:  true,
		StoreDir:   t.TempDir(),
		NoLog:      true,
		NoSigs:     true,
	}}
	s.Restart()
	t.Cleanup(s.Shutdown)
	return s
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("natstest: finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// URL is the client URL.
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.opts.Port) }

// Shutdown stops the server (its store stays).
func (s *Server) Shutdown() {
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
		s.srv = nil
	}
}

// Restart starts the server again on the same port and store.
func (s *Server) Restart() {
	s.t.Helper()
	if s.srv != nil {
		return
	}
	opts := s.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		s.t.Fatalf("natstest: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(60 * time.Second) {
		s.t.Fatalf("natstest: the server on port %d did not start within 60s", s.opts.Port)
	}
	s.srv = srv
}

func dialTCP(port int) (net.Conn, error) {
	return net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
}

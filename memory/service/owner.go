package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/staging"
)

// SocketFile is the service's socket, under the home's run directory.
const SocketFile = "memory.sock"

// SocketPath is where the service of the store in dir listens: for the home's
// store ($EXOCORTEX_HOME/memory) $EXOCORTEX_HOME/run/memory.sock, for a store
// elsewhere (memory --dir) memory.sock inside it.
func SocketPath(dir string) string {
	dir = filepath.Clean(dir)
	if filepath.Base(dir) == "memory" {
		return filepath.Join(filepath.Dir(dir), "run", SocketFile)
	}
	return filepath.Join(dir, SocketFile)
}

// maxMsg bounds one message either way: a search's hits or a batch of records
// at 100k-record scale stay far below it.
const maxMsg = 256 << 20

// Config says which store to reach and how to open it if this process becomes
// its owner.
type Config struct {
	// Dir is the store directory ($EXOCORTEX_HOME/memory).
	Dir string
	// Socket overrides SocketPath(Dir).
	Socket string
	// Options open the store when this process becomes the owner, at Connect
	// or when it takes over from an owner that went away. Use LoadEmbedder
	// rather than Embedder: it is called only once the lock is held.
	Options memory.Options
	// Describe names the store's embedder for people in Stats (nil: its model id).
	Describe func(memory.Embedder) string
	// Wait bounds how long Connect waits for an owner that holds the lock but
	// does not answer yet (default 15s).
	Wait time.Duration
	// Logger receives the owner's notices (default slog.Default()).
	Logger *slog.Logger
}

// Client is a connection to the memory service of one store: every call goes
// to the owner, which is this process itself while Owner says so. It is safe
// for concurrent use.
type Client struct {
	exocortexv1.MemoryServiceClient
	cfg  Config
	sock string
	conn *grpc.ClientConn
	log  *slog.Logger

	mu    sync.Mutex
	own   *owner // non-nil while this process serves the store
	stop  context.CancelFunc
	done  chan struct{}
	close sync.Once
}

// owner is this process's store and its server.
type owner struct {
	store *memory.Store
	srv   *grpc.Server
	lis   net.Listener
	// server answers the socket's calls and this process's own reads
	// (local.go); calls are those reads under way, which Close waits for.
	server *Server
	calls  sync.WaitGroup
}

// Connect reaches the memory service of cfg.Dir: if no process holds the store
// it opens it and serves it on the socket (this process is then the owner
// until Close), otherwise it is a client of the owner. It returns once the
// service answers. Whenever the owner goes away (it exits, or is killed), the
// client tries to take the store over, and calls wait (with WaitForReady) for
// whichever process does.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Dir == "" {
		return nil, errors.New("memory service: no store directory")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("memory service: store directory %s: %w", cfg.Dir, err)
	}
	cfg.Dir = dir
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Options.Logger == nil {
		cfg.Options.Logger = cfg.Logger
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 15 * time.Second
	}
	sock := cfg.Socket
	if sock == "" {
		sock = SocketPath(dir)
	}
	if len(sock) > 104 {
		return nil, fmt.Errorf("memory service: the socket path %s is longer than a unix socket allows (104 bytes): use a shorter $EXOCORTEX_HOME", sock)
	}
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		return nil, fmt.Errorf("memory service: creating %s: %w", filepath.Dir(sock), err)
	}
	c := &Client{cfg: cfg, sock: sock, log: cfg.Logger, done: make(chan struct{})}
	conn, err := grpc.NewClient("unix://"+sock,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 300 * time.Millisecond},
			MinConnectTimeout: 2 * time.Second,
		}),
		grpc.WithDefaultCallOptions(grpc.WaitForReady(true), grpc.MaxCallRecvMsgSize(maxMsg), grpc.MaxCallSendMsgSize(maxMsg)),
		grpc.WithUnaryInterceptor(retry),
	)
	if err != nil {
		return nil, fmt.Errorf("memory service: %s: %w", sock, err)
	}
	c.conn = conn
	c.MemoryServiceClient = exocortexv1.NewMemoryServiceClient(conn)
	locked, err := c.tryOwn(ctx)
	if err != nil {
		conn.Close()
		return nil, err
	}
	wctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go c.watch(wctx)
	// Wait for the service to answer (our own server, or the owner's).
	rctx, cancel := context.WithTimeout(ctx, cfg.Wait)
	defer cancel()
	st, err := c.MemoryServiceClient.Stats(rctx, &exocortexv1.MemoryStatsRequest{})
	if err != nil {
		c.Close()
		if locked != nil && status.Code(err) == codes.DeadlineExceeded && ctx.Err() == nil {
			return nil, fmt.Errorf("memory service: %w, and nothing answers on %s after %s (an Exocortex older than the memory service holds it: stop it, or wait for it to end)", locked, sock, cfg.Wait)
		}
		return nil, fmt.Errorf("memory service: %s: %w", sock, Error(err))
	}
	if filepath.Clean(st.GetDir()) != dir {
		c.Close()
		return nil, fmt.Errorf("memory service: %s serves the store %s, not %s", sock, st.GetDir(), dir)
	}
	return c, nil
}

// Owner says whether this process serves the store.
func (c *Client) Owner() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.own != nil
}

// Store is the open store while this process is the owner (nil otherwise), for
// what only the owner may do (a benchmark's in-process baseline).
func (c *Client) Store() *memory.Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.own == nil {
		return nil
	}
	return c.own.store
}

// Socket is the service's socket path.
func (c *Client) Socket() string { return c.sock }

// tryOwn opens the store and serves it unless another process holds it; it
// returns the lock error then.
func (c *Client) tryOwn(ctx context.Context) (*staging.LockedError, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.own != nil {
		return nil, nil
	}
	st, err := memory.Open(ctx, c.cfg.Dir, c.cfg.Options)
	var locked *staging.LockedError
	if errors.As(err, &locked) {
		return locked, nil
	}
	if err != nil {
		return nil, fmt.Errorf("memory service: %w", err)
	}
	// Holding the lock, no live owner serves the socket: a file left there is
	// a dead owner's.
	if err := os.Remove(c.sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		st.Close()
		return nil, fmt.Errorf("memory service: removing the stale socket %s: %w", c.sock, err)
	}
	lis, err := net.Listen("unix", c.sock)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("memory service: listening on %s: %w", c.sock, err)
	}
	if err := os.Chmod(c.sock, 0o600); err != nil {
		lis.Close()
		st.Close()
		return nil, fmt.Errorf("memory service: %s: %w", c.sock, err)
	}
	name := ""
	if e := st.Embedder(); c.cfg.Describe != nil {
		name = c.cfg.Describe(e)
	} else if e != nil {
		name = e.ModelID()
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxMsg), grpc.MaxSendMsgSize(maxMsg))
	server := NewServer(st, name)
	exocortexv1.RegisterMemoryServiceServer(srv, server)
	go srv.Serve(lis)
	c.own = &owner{store: st, srv: srv, lis: lis, server: server}
	c.log.Debug("memory service: serving", "store", c.cfg.Dir, "socket", c.sock)
	if c.conn != nil {
		c.conn.ResetConnectBackoff()
	}
	return nil, nil
}

// takeoverPoll is how often a client that finds no owner tries the lock.
const takeoverPoll = 100 * time.Millisecond

// watch takes the store over when the owner goes away: whenever the
// connection fails while no process serves the socket, it tries to open the
// store; one client wins the lock, the others connect to it.
func (c *Client) watch(ctx context.Context) {
	defer close(c.done)
	for {
		st := c.conn.GetState()
		switch st {
		case connectivity.Idle:
			c.conn.Connect()
		case connectivity.TransientFailure:
			if !c.Owner() {
				if _, err := c.tryOwn(ctx); err != nil {
					c.log.Warn("memory service: taking over the store failed", "store", c.cfg.Dir, "err", err)
					select {
					case <-ctx.Done():
						return
					case <-time.After(time.Second):
					}
				}
			}
		}
		// A channel in TRANSIENT_FAILURE stays there while it retries, so
		// the lock is tried again every takeoverPoll until it is READY.
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if st == connectivity.TransientFailure {
			wctx, cancel = context.WithTimeout(ctx, takeoverPoll)
		}
		c.conn.WaitForStateChange(wctx, st)
		cancel()
		if ctx.Err() != nil {
			return
		}
	}
}

// Close ends the connection; the owner stops serving (letting calls under way
// finish, up to a few seconds) and closes the store, so that a client takes it
// over.
func (c *Client) Close() error {
	var err error
	c.close.Do(func() {
		if c.stop != nil {
			c.stop()
			<-c.done
		}
		c.conn.Close()
		c.mu.Lock()
		own := c.own
		c.own = nil
		c.mu.Unlock()
		if own == nil {
			return
		}
		stopped := make(chan struct{})
		go func() { own.srv.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(3 * time.Second):
			own.srv.Stop()
		}
		own.calls.Wait()
		err = own.store.Close()
	})
	return err
}

// idempotent are the calls a client may send again when the owner went away
// before answering: reads, and writes whose repetition changes nothing more
// (Save names its new records first).
var idempotent = map[string]bool{
	exocortexv1.MemoryService_Search_FullMethodName:       true,
	exocortexv1.MemoryService_Compile_FullMethodName:      true,
	exocortexv1.MemoryService_Get_FullMethodName:          true,
	exocortexv1.MemoryService_Census_FullMethodName:       true,
	exocortexv1.MemoryService_Save_FullMethodName:         true,
	exocortexv1.MemoryService_Update_FullMethodName:       true,
	exocortexv1.MemoryService_Archive_FullMethodName:      true,
	exocortexv1.MemoryService_History_FullMethodName:      true,
	exocortexv1.MemoryService_Stats_FullMethodName:        true,
	exocortexv1.MemoryService_Check_FullMethodName:        true,
	exocortexv1.MemoryService_Vectors_FullMethodName:      true,
	exocortexv1.MemoryService_Embed_FullMethodName:        true,
	exocortexv1.MemoryService_ToolRetrieve_FullMethodName: true,
	exocortexv1.MemoryService_ToolLoad_FullMethodName:     true,
}

// retry sends an idempotent call again while the owner is changing
// (UNAVAILABLE), until the call's context ends. A call that never reached an
// owner waits for one anyway (WaitForReady); this covers a call under way when
// the owner died.
func retry(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if save, ok := req.(*exocortexv1.MemorySaveRequest); ok {
		for _, r := range save.GetRecords() {
			if r.GetId() == "" && r.GetKey() == "" {
				r.Id = memory.NewID()
			}
		}
	}
	for attempt := 0; ; attempt++ {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil || status.Code(err) != codes.Unavailable || !idempotent[method] || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(min(attempt+1, 10)) * 20 * time.Millisecond):
		}
	}
}

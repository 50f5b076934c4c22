package protocol

import (
	"google.golang.org/grpc"
)

// window is the HTTP/2 flow-control window of a plugin connection, on both
// sides. Setting it turns off gRPC's bandwidth estimator, which otherwise sends
// a PING with every data frame it receives and so wakes the other process for
// its acknowledgement on every hook call. Hook messages are small and the peer
// is on the same machine, so a fixed 4 MiB window never throttles them.
const window = 4 << 20

// NewGRPCServer is the plugin's gRPC server, with the transport settings
// above, for go-plugin's ServeConfig.GRPCServer.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	return grpc.NewServer(append(opts,
		grpc.InitialWindowSize(window),
		grpc.InitialConnWindowSize(window),
	)...)
}

// DialOptions are the host's side of the transport settings above, for
// go-plugin's ClientConfig.GRPCDialOptions.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(window),
		grpc.WithInitialConnWindowSize(window),
	}
}

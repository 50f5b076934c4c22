package service

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/exocortex/exocortex/memory"
)

// RemoteError is an error the service answered with, as its message says it
// (without gRPC's "rpc error: code = ... desc =" wrapping). A NOT_FOUND one
// wraps memory.ErrNotFound, so errors.Is tells it as in-process.
type RemoteError struct {
	Code codes.Code
	Msg  string
}

func (e *RemoteError) Error() string { return e.Msg }

// Unwrap gives memory.ErrNotFound for NOT_FOUND.
func (e *RemoteError) Unwrap() error {
	if e.Code == codes.NotFound {
		return memory.ErrNotFound
	}
	return nil
}

// Error turns a call's gRPC status error into a RemoteError (nil stays nil, an
// error that is no status is returned as it is). A client prints it to people.
func Error(err error) error {
	if err == nil {
		return nil
	}
	var re *RemoteError
	if errors.As(err, &re) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	msg := st.Message()
	if st.Code() == codes.Unavailable {
		msg = "the memory service is unavailable: " + msg
	}
	return &RemoteError{Code: st.Code(), Msg: msg}
}

// Package statepair holds two example plugins that pass typed state between them
// through the host: writer (examples/statepair/writer) counts tool failures in the
// built-in failure_tracker key at tool_execute_after, and reader
// (examples/statepair/reader) reads that key at message_loop_end and queues an
// intervention. Neither names the other, and no string is shared between them: the
// key is the message type exocortexv1.FailureTracker, declared once in state.proto.
//
// This package's test starts both as real plugin processes and carries the state
// from one to the other as the host does.
package statepair

// Package exocortexv1 is the generated Go code of the Exocortex plugin protocol,
// version 1. The .proto files beside it are the contract; everything else in this
// directory is produced from them by `make generate` and must not be edited.
// Extension authors use it through the SDK (package sdk).
package exocortexv1

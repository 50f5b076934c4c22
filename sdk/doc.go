// Package sdk is what an Exocortex extension author imports, together with the
// generated protocol (proto/exocortex/v1). It hides go-plugin and gRPC: an extension
// is a small Go type with a Spec method and one method per hook it handles, state is
// read and written through typed keys, and Serve turns a set of extensions and tools
// into a plugin process.
package sdk

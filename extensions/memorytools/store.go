// Package memorytools provides the memory and library tools over the home's
// memory store:
//
//   - memory_save, memory_retrieve, memory_delete: ECHOMEN's keyed memories in the
//     main area, answering with ECHOMEN's exact strings ("Memory item 'KEY' saved
//     successfully.");
//   - memory_load, memory_forget: Agent Zero's similarity search and
//     similarity delete, with a threshold and an optional filter expression;
//   - library_add, library_search, library_list: documents in the isolated library
//     area (a memory search that does not name the library never sees them, and
//     library_search sees nothing else), with a catalog of the documents kept in
//     $EXOCORTEX_HOME/library/catalog.json for the library catalog extension.
//
// # Where the store is
//
// The store is the home's memory service: one process owns it and every other
// is its client, so the CLI, a second session and sleep are never refused while
// a session runs. The tools reach it as any plugin does, through the host
// (sdk.Call.Memory): the plugin declares uses_memory, and "*" in its
// memory_write_areas, since memory_save, memory_delete and memory_forget may
// name any area. Nothing here opens, holds or closes the store.
package memorytools

import (
	"errors"

	"google.golang.org/grpc/status"

	"github.com/exocortex/exocortex/extensions/internal/catalog"
)

// Where the tools keep their data, inside the home directory.
const (
	StoreDir    = "memory"
	CatalogFile = catalog.File
)

// The memory areas the tools name (package memory's).
const (
	AreaMain    = "main"
	AreaLibrary = "library"
)

// WriteAreas are the memory areas the tools write, for the plugin's
// MemoryWriteAreas: every one ("*"), since memory_save and memory_delete take
// any area and memory_forget deletes what its query matches wherever it is.
func WriteAreas() []string { return []string{"*"} }

// Set is the tools, with the home directory the library catalog is written in.
type Set struct {
	home func() (string, error)
}

// New returns the tools; home gives the Exocortex home directory on each call.
func New(home func() (string, error)) *Set { return &Set{home: home} }

// Home returns the home directory.
func (st *Set) Home() (string, error) {
	home, err := st.home()
	if err != nil {
		return "", err
	}
	if home == "" {
		return "", errors.New("the Exocortex home directory is unknown: set EXOCORTEX_HOME")
	}
	return home, nil
}

// plain is err as the model should read it: a memory service's status
// message without the transport's prefix ("rpc error: code = ... desc = ").
func plain(err error) error {
	if s, ok := status.FromError(err); ok && err != nil {
		return errors.New(s.Message())
	}
	return err
}

// Package catalog is the format and place of the library catalog,
// $EXOCORTEX_HOME/library/catalog.json: the library tools (package
// memorytools) write it and the library catalog extension (package library)
// reads it. It is a library, not an extension, so that neither imports the
// other and both agree on the path by construction (the seed's seam 6, the
// catalog path declared three times).
package catalog

import "time"

// File is where the catalog is kept, inside the home directory.
const File = "library/catalog.json"

// Catalog is the content of $EXOCORTEX_HOME/library/catalog.json: one entry per
// library document, sorted by key. The library catalog extension reads it to tell
// the model what the library holds; it is rewritten whole (temporary file and
// rename) after every change, from the store, which stays the truth.
type Catalog struct {
	Version   int       `json:"version"`
	Updated   time.Time `json:"updated"`
	Count     int       `json:"count"`
	Documents []Entry   `json:"documents"`
}

// Entry describes one document.
type Entry struct {
	// Key is the document's id in the library (derived from its title).
	Key     string    `json:"key"`
	Title   string    `json:"title"`
	Source  string    `json:"source,omitempty"`
	Tags    []string  `json:"tags"`
	Words   int       `json:"words"`
	Added   time.Time `json:"added"`
	Changed time.Time `json:"changed"`
}

// Version is the catalog format's version.
const Version = 1

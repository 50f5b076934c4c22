// Package hnsw is an approximate nearest-neighbour index: a Hierarchical Navigable
// Small World graph (Malkov & Yashunin, "Efficient and robust approximate nearest
// neighbor search using Hierarchical Navigable Small World graphs", 2018).
//
// # How it works
//
// Every vector is a node. Each node draws a top layer from a geometric distribution
// (a node on layer l is also on layer l+1 with probability Ml), so layer 0 holds
// everything and each layer above holds a thinning sample. On each layer a node
// links to at most M neighbours (2·M on layer 0), chosen by the paper's heuristic:
// a candidate is kept only if it is nearer to the node than to any neighbour already
// kept, which spreads the links in all directions and keeps the graph navigable on
// clustered data. A search walks greedily down from the top layer to find a good
// starting point, then runs a best-first search on layer 0 that keeps the EfSearch
// nearest nodes seen; larger EfSearch means higher recall and slower queries.
// Inserting a node is the same search with EfConstruction, followed by linking.
//
// # Layout and speed
//
// Vectors live in one contiguous []float32, indexed by an internal slot number;
// layer-0 links live in one contiguous []uint32 with a fixed stride. For cosine
// distance vectors are normalised on insert, so the distance is 1 - dot product
// (an AVX2/FMA kernel on amd64). A search uses a visited set cleared by bumping a
// generation counter and two binary heaps, taken from a pool: no map lookups and no
// allocation in the hot loop.
//
// # Concurrency
//
// Any number of searches may run alongside one writer (Add, Delete and Import are
// serialised by the graph itself, so calling them from several goroutines is safe
// but not parallel). A large Add inserts in parallel on Parallelism goroutines;
// by default an Add of fewer than AutoParallelMin nodes inserts in order, so the
// same inputs build the same graph every time.
// Link lists are read and written with atomic operations and guarded by striped
// locks among writers; the per-node data (vector, key, level) is written once
// before the node becomes reachable.
//
// # Deletes
//
// Delete marks a node as a tombstone and repairs the links of its neighbours:
// each neighbour that linked to it chooses new links among its remaining
// neighbours and the deleted node's neighbours. Tombstones stay in the graph as
// waypoints (so no region becomes unreachable) but never appear in results. When
// tombstones exceed RebuildRatio of the nodes, the graph is rebuilt from the live
// nodes, so recall and memory do not erode however many deletes and re-adds occur.
// Adding a key that is already present replaces its vector.
//
// # Files
//
// Export writes a versioned binary file with a header checksum and a body checksum
// (CRC-32C); Import rejects a truncated, corrupt or incompatible file with an error
// that says so, and leaves the graph unchanged, so the caller can rebuild from its
// own source of truth.
//
// The API follows github.com/coder/hnsw (NewGraph, MakeNode, Add, Search, Delete,
// Lookup, Len, Export, Import) so that either can stand in for the other.
package hnsw

package exocortexv1

// RecallPool is how many hits the agent's recall (recall_search) asks the
// memory store for once per user prompt.
const RecallPool = 15

// RecallSearchOptions are the search options of the agent's recall: the one
// definition the recall extension and the terminal's /memory search both use,
// so that /memory search ranks exactly as the agent's recall does. Recall's
// match-score threshold (tools.memory.recall.threshold) is applied by each
// caller to the hits' Match.
func RecallSearchOptions() *MemorySearchOptions {
	return &MemorySearchOptions{Limit: RecallPool}
}

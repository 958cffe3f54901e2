package model

import "github.com/ggml-go/ggml/graph"

// DropGraph makes s build and place its next batch's graph afresh, as
// every batch did before graphs were reused.
func DropGraph(s *Session) { s.dropGraph() }

// LastGraph is the graph s computed last.
func LastGraph(s *Session) *graph.Graph { return s.last }

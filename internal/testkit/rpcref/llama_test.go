package rpcref

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/llamaref"
)

// TestLlamaLayout: the parameter structs llamaref lays out for the npm
// build hold this build's documented defaults too (its llama.h gives the
// same sizes and offsets), so the same structs drive both.
func TestLlamaLayout(t *testing.T) { require.NoError(t, llamaref.CheckDefaults(Llama(t))) }

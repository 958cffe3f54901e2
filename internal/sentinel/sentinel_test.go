package sentinel

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSentinelMatchesItsKinds(t *testing.T) {
	other := errors.New("other")
	s := New("pkg: unsupported", errors.ErrUnsupported)
	wrapped := fmt.Errorf("%w: MUL_MAT of q4_0", s)
	assert.ErrorIs(t, wrapped, s)
	assert.ErrorIs(t, wrapped, errors.ErrUnsupported)
	assert.NotErrorIs(t, wrapped, other)
	assert.NotErrorIs(t, fmt.Errorf("%w", errors.ErrUnsupported), s, "the general error is not the specific one")
	assert.Equal(t, "pkg: unsupported: MUL_MAT of q4_0", wrapped.Error())
}

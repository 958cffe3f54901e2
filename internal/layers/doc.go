// Package layers holds the module's layering test: the ordered list of
// layers (layers_test.go) and the check that no package imports, in its
// non-test code, a package of a layer above its own. docs/architecture.md
// draws the same layers.
package layers

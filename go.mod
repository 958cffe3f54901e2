module github.com/ggml-go/ggml

go 1.25.0

require (
	github.com/ebitengine/purego v0.10.2
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.47.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

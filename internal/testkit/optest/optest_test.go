package optest

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/ops"
)

// cpuBackend starts a CPU backend on threads threads.
func cpuBackend(t testing.TB, threads int) backend.Backend {
	t.Helper()
	b, err := cpu.Device().Init(backend.Options{Threads: threads})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// TestCPUSelfConsistent runs every case (quick, or full with OPTEST_FULL=1)
// with our CPU device on 3 threads, through its buffers, against itself on
// 1: results must be identical, whatever the thread count.
func TestCPUSelfConsistent(t *testing.T) {
	one := cpu.New(cpu.Options{Threads: 1})
	defer one.Close()
	three := cpuBackend(t, 3)
	cases := Cases(testFull(), nil)
	require.NotEmpty(t, cases)
	var tally Tally
	for _, c := range cases {
		c.Tol = Tolerance{Exact: true}
		r := RunBackend(c, three, CPU{one}, 1)
		tally.Add(r)
		require.NotEqual(t, Failed, r.Status, "%s: %s", c.Name, r.Detail)
	}
	t.Logf("3 threads against 1: %s", tally.String())
}

// skewed is a device that computes on the CPU's kernels and then changes
// element 7 of every ADD, so a comparison must fail and say where.
var skewed = devtest.New(devtest.Config{Name: "SKEWED0", Type: backend.DeviceGPU,
	Faults: devtest.Faults{Corrupt: func(n *graph.Tensor, mem []byte, at uint64) {
		if n.Op == ops.Add {
			v := math.Float32frombits(binary.LittleEndian.Uint32(mem[at+4*7:]))
			binary.LittleEndian.PutUint32(mem[at+4*7:], math.Float32bits(v+1))
		}
	}}})

func TestMismatchDetail(t *testing.T) {
	eng := cpu.New(cpu.Options{Threads: 1})
	defer eng.Close()
	be, err := skewed.Init(backend.Options{})
	require.NoError(t, err)
	defer be.Close()
	c := Cases(false, []string{"ADD"})[1] // ne=[20,5,4,3]
	r := RunBackend(c, be, CPU{eng}, 1)
	require.Equal(t, Failed, r.Status)
	require.Regexp(t, `^output 0 \(node_0\): outputs differ: NMSE \S+ > 1e-07; first difference at element 7 \[7,0,0,0\]: `+
		`got \S+, reference \S+; largest at element 7 \[7,0,0,0\]`, r.Detail)

	c.Tol.Exact = true
	r = RunBackend(c, be, CPU{eng}, 1)
	require.Regexp(t, `element 7 \[7,0,0,0\]: got \S+, reference \S+ \(exact match required\)$`, r.Detail)
}

// FuzzParseDesc: parsing a description never panics, every key and value
// comes from the input as "key=value", and the typed accessors never panic
// on what it returns.
func FuzzParseDesc(f *testing.F) {
	for _, s := range []string{
		"type=f16,ne_a=[128,2,2,2],v=0",
		"type_a=q4_0,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0,o=1",
		"hsv=128,hsk=128,nh=4,nr23=[1,1],kv=512,nb=1,mask=1,sinks=0,max_bias=0.000000,logit_softcap=0.000000,prec=f32,type_KV=f16,permute=[0,1,2,3]",
		"a=[", "a=]", "=", ",,", "a=(b,c)", "x,split", "k=[1,,2]", "ne=[1,2,3,4,5]", "x=[-9223372036854775808]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDesc(s)
		if err != nil {
			return
		}
		for k, v := range d {
			if k == "" || !strings.Contains(s, k+"="+v) && !(v == "1" && strings.Contains(s, k)) {
				t.Fatalf("ParseDesc(%q): %q=%q is not in the input", s, k, v)
			}
			_, _ = d.Type(k)
			_, _ = d.Int(k)
			_, _ = d.Float(k)
			_, _ = d.Bool(k)
			_, _ = d.Ints(k)
			if ne, err := d.Ne(k); err == nil {
				l, _ := d.Ints(k)
				if len(l) > 4 {
					t.Fatalf("Ne(%q) accepted %d dimensions", v, len(l))
				}
				for i := len(l); i < 4; i++ {
					if ne[i] != 1 {
						t.Fatalf("Ne(%q) = %v: missing dimensions must be 1", v, ne)
					}
				}
			}
		}
	})
}

func TestParseDesc(t *testing.T) {
	d, err := ParseDesc("type=f16,ne_a=[128,2,2,2],v=0,scale=0.5,b=true")
	require.NoError(t, err)
	require.Equal(t, Desc{"type": "f16", "ne_a": "[128,2,2,2]", "v": "0", "scale": "0.5", "b": "true"}, d)
	ne, err := d.Ne("ne_a")
	require.NoError(t, err)
	require.Equal(t, [4]int64{128, 2, 2, 2}, ne)
	_, err = d.Ne("missing")
	require.Error(t, err)
	for _, bad := range []string{"a=[1,2", "a=(1,2", "=1", "a=1,=2"} {
		_, err := ParseDesc(bad)
		require.Error(t, err, bad)
	}
	d, err = ParseDesc("a=1,split") // a bare word is a flag
	require.NoError(t, err)
	require.Equal(t, Desc{"a": "1", "split": "1"}, d)
	d, err = ParseDesc("ne=[3],l=[1,2,3,4,5]")
	require.NoError(t, err)
	ne, err = d.Ne("ne")
	require.NoError(t, err)
	require.Equal(t, [4]int64{3, 1, 1, 1}, ne)
	_, err = d.Ne("l")
	require.Error(t, err)
}

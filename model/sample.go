package model

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Sampler chooses the next token from logits, in llama.cpp's default chain
// order: repetition penalty, top-k, top-p, min-p, temperature, then a draw.
// The zero value is greedy (the highest logit, the lowest id on ties).
type Sampler struct {
	// Temp divides the logits before the draw; 0 (or less) is greedy.
	Temp float32
	// TopK keeps the K most likely tokens; 0 keeps all.
	TopK int
	// TopP keeps the most likely tokens whose probabilities add up to at
	// least P; 0 or 1 keeps all.
	TopP float32
	// MinP keeps tokens at least MinP times as likely as the most likely;
	// 0 keeps all.
	MinP float32
	// RepeatPenalty divides positive (multiplies negative) logits of tokens
	// among the last RepeatLastN (64 when 0) of the history; 0 or 1 is off.
	RepeatPenalty float32
	RepeatLastN   int
	// Seed seeds the draw: the same seed, model and prompt give the same
	// tokens.
	Seed uint64
}

// Check reports settings outside their ranges.
func (sm Sampler) Check() error {
	switch {
	case sm.TopK < 0, sm.RepeatLastN < 0:
		return fmt.Errorf("%w: top-k %d, repeat-last-n %d", ErrArgument, sm.TopK, sm.RepeatLastN)
	case !(sm.TopP >= 0 && sm.TopP <= 1), !(sm.MinP >= 0 && sm.MinP <= 1):
		return fmt.Errorf("%w: top-p %v, min-p %v (0..1)", ErrArgument, sm.TopP, sm.MinP)
	case !(sm.RepeatPenalty >= 0), math.IsNaN(float64(sm.Temp)):
		return fmt.Errorf("%w: repeat penalty %v, temperature %v", ErrArgument, sm.RepeatPenalty, sm.Temp)
	}
	return nil
}

// NewRand is the random source Next draws from for sm's seed.
func (sm Sampler) NewRand() *rand.Rand { return rand.New(rand.NewPCG(sm.Seed, 0x9e3779b97f4a7c15)) }

type candidate struct {
	id    int32
	logit float64
	p     float64
}

// Next returns the token to emit after logits, given the tokens so far
// (for the repetition penalty) and r (NewRand) for the draw.
func (sm Sampler) Next(logits []float32, history []int32, r *rand.Rand) int32 {
	penalty := sm.RepeatPenalty != 0 && sm.RepeatPenalty != 1
	if sm.Temp <= 0 && !penalty && len(logits) > 0 {
		// Plain greedy, once per generated token: a scan of the logits
		// as they are, without the candidate list the other samplers
		// build. The first maximum is the lowest id; the float32
		// comparisons order as the float64 ones below.
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		return int32(best)
	}
	cs := make([]candidate, len(logits))
	for i, v := range logits {
		cs[i] = candidate{id: int32(i), logit: float64(v)}
	}
	if penalty {
		n := sm.RepeatLastN
		if n == 0 {
			n = 64
		}
		seen := map[int32]bool{}
		for _, t := range history[max(len(history)-n, 0):] {
			if t >= 0 && int(t) < len(cs) && !seen[t] {
				seen[t] = true
				if c := &cs[t]; c.logit > 0 {
					c.logit /= float64(sm.RepeatPenalty)
				} else {
					c.logit *= float64(sm.RepeatPenalty)
				}
			}
		}
	}
	if sm.Temp <= 0 {
		// A scan, not a sort: greedy decoding runs once per token over
		// the whole vocabulary. The first maximum is the lowest id.
		best := 0
		for i := range cs {
			if cs[i].logit > cs[best].logit {
				best = i
			}
		}
		return cs[best].id
	}
	// Most likely first, the lower id first on ties.
	slices.SortFunc(cs, func(a, b candidate) int {
		if c := cmp.Compare(b.logit, a.logit); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	if sm.TopK > 0 && sm.TopK < len(cs) {
		cs = cs[:sm.TopK]
	}
	softmax := func(temp float64) {
		var sum float64
		for i := range cs {
			cs[i].p = math.Exp((cs[i].logit - cs[0].logit) / temp)
			sum += cs[i].p
		}
		for i := range cs {
			cs[i].p /= sum
		}
	}
	softmax(1)
	if sm.TopP > 0 && sm.TopP < 1 {
		var cum float64
		for i := range cs {
			cum += cs[i].p
			if cum >= float64(sm.TopP) {
				cs = cs[:i+1]
				break
			}
		}
	}
	if sm.MinP > 0 {
		limit := float64(sm.MinP) * cs[0].p
		keep := 1
		for keep < len(cs) && cs[keep].p >= limit {
			keep++
		}
		cs = cs[:keep]
	}
	softmax(float64(sm.Temp))
	u := r.Float64()
	for _, c := range cs {
		if u < c.p {
			return c.id
		}
		u -= c.p
	}
	return cs[len(cs)-1].id
}

// Generate decodes prompt and then up to n tokens, each chosen by sm from
// the previous position's logits, stopping after EOS or EOT. emit, when set,
// gets each generated token as it comes; an error from it stops generation.
// It returns the generated tokens (those before an error included);
// Timings has the counts and durations.
func (s *Session) Generate(ctx context.Context, prompt []int32, n int, sm Sampler, emit func(int32) error) (out []int32, err error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	s.timings = Timings{}
	if err := sm.Check(); err != nil {
		return nil, err
	}
	if len(prompt) == 0 {
		return nil, fmt.Errorf("%w: empty prompt", ErrArgument)
	}
	start := time.Now()
	lg, err := s.decode(ctx, prompt, nil, nil)
	if err != nil {
		return nil, err
	}
	genStart := time.Now()
	s.timings = Timings{PromptTokens: len(prompt), Prompt: genStart.Sub(start)}
	defer func() {
		s.timings.Generated = len(out)
		s.timings.Generation = time.Since(genStart)
	}()
	last := lg[len(lg)-1]
	r := sm.NewRand()
	history := append([]int32(nil), prompt...)
	// One token a call, its logits in the same row every time.
	next, want, row := make([]int32, 1), []bool{true}, make([][]float32, 1)
	for len(out) < n {
		t := sm.Next(last, history, r)
		out = append(out, t)
		history = append(history, t)
		if emit != nil {
			if err := emit(t); err != nil {
				return out, err
			}
		}
		if s.m.Vocab.IsStop(t) || len(out) == n {
			break
		}
		next[0] = t
		lg, err := s.decode(ctx, next, want, row)
		if err != nil {
			return out, err
		}
		s.timings.Decoded++
		last = lg[0]
	}
	return out, nil
}

// Timings are the counts and durations of a session's last Generate.
type Timings struct {
	// PromptTokens were decoded in Prompt (up to the prompt's logits).
	PromptTokens int
	Prompt       time.Duration
	// Generated tokens were sampled in Generation, which runs from the
	// prompt's logits to Generate's return. The first comes from the
	// prompt's logits and the last is not decoded, so Decoded (a decode
	// per token between them) is Generated-1 after a full run: the
	// figure a decoding speed is made of, as llama.cpp's eval count.
	Generated, Decoded int
	Generation         time.Duration
}

// PromptRate is prompt tokens per second (0 without a prompt decoded).
func (t Timings) PromptRate() float64 { return rate(t.PromptTokens, t.Prompt) }

// DecodeRate is generated tokens decoded per second (0 with none).
func (t Timings) DecodeRate() float64 { return rate(t.Decoded, t.Generation) }

func rate(n int, d time.Duration) float64 {
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// String reports the timings as ggml run prints them.
func (t Timings) String() string {
	return fmt.Sprintf("prompt: %d tokens in %v (%.1f tokens/s)\ngeneration: %d tokens in %v (%d decoded, %.1f tokens/s)",
		t.PromptTokens, t.Prompt.Round(time.Millisecond), t.PromptRate(),
		t.Generated, t.Generation.Round(time.Millisecond), t.Decoded, t.DecodeRate())
}

// Timings are the counts and durations of the last Generate (zero before
// one, or when it failed before its prompt's logits).
func (s *Session) Timings() Timings { return s.timings }

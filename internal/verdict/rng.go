package verdict

import (
	"hash/fnv"
	"math/rand/v2"
)

// rngFor seeds a generator from a check's identity, so each interval is
// reproducible and independent of evaluation order.
func rngFor(parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

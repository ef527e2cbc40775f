package llmsim

import (
	"container/list"
	"hash/fnv"
)

// kvCache is the engine's prefix cache: the KV blocks of prompts (and of
// finished replies) by the hash of their tokens chained from the start,
// as vLLM's automatic prefix caching keys them, least recently used first
// out once it holds capacity blocks. Only the engine goroutine touches it.
type kvCache struct {
	block    int // tokens per block
	capacity int // blocks
	lru      *list.List
	at       map[uint64]*list.Element
}

func newKVCache(block, capacity int) *kvCache {
	return &kvCache{block: block, capacity: capacity, lru: list.New(), at: map[uint64]*list.Element{}}
}

// blockHashes are the chained hashes of the full blocks of tokens: block i
// hashes block i−1's hash and its own tokens, so equal hashes mean equal
// prefixes, never merely equal blocks.
func blockHashes(tokens []string, block int) []uint64 {
	n := len(tokens) / block
	out := make([]uint64, 0, n)
	var prev uint64
	h := fnv.New64a()
	var b [8]byte
	for i := range n {
		h.Reset()
		for k := range b {
			b[k] = byte(prev >> (8 * k))
		}
		_, _ = h.Write(b[:])
		for _, t := range tokens[i*block : (i+1)*block] {
			_, _ = h.Write([]byte(t))
			_, _ = h.Write([]byte{0})
		}
		prev = h.Sum64()
		out = append(out, prev)
	}
	return out
}

// lookup counts the leading blocks of hs that are cached, refreshing them.
func (c *kvCache) lookup(hs []uint64) int {
	n := 0
	for _, h := range hs {
		e, ok := c.at[h]
		if !ok {
			break
		}
		c.lru.MoveToFront(e)
		n++
	}
	return n
}

// insert caches the blocks hs, evicting the least recently used beyond
// capacity.
func (c *kvCache) insert(hs []uint64) {
	for _, h := range hs {
		if e, ok := c.at[h]; ok {
			c.lru.MoveToFront(e)
			continue
		}
		c.at[h] = c.lru.PushFront(h)
	}
	for c.lru.Len() > c.capacity {
		e := c.lru.Back()
		delete(c.at, e.Value.(uint64))
		c.lru.Remove(e)
	}
}

// blocksFor is how many blocks n tokens occupy.
func blocksFor(n, block int) int {
	return (n + block - 1) / block
}

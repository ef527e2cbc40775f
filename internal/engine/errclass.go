package engine

import (
	"fmt"
	"sort"

	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/result"
)

// maxClasses bounds the classes kept; classes are few (a dozen kinds of
// transport failure, a few dozen status codes), so this is a guard only.
const maxClasses = 64

// classTally counts failures by class (transport.Class), keeping the
// first message of each as its example. Unlike tally, which keeps the
// first few distinct messages, it counts every failure: the class that
// dominates is the one a summary must quote, not the first one seen.
type classTally struct {
	byClass map[string]*result.ErrorClass
	total   int64
}

func (c *classTally) add(err error) {
	c.addN(transport.Class(err), 1, err.Error())
}

func (c *classTally) addN(class string, n int64, example string) {
	c.total += n
	if c.byClass == nil {
		c.byClass = map[string]*result.ErrorClass{}
	}
	if e, ok := c.byClass[class]; ok {
		e.Count += n
		return
	}
	if len(c.byClass) >= maxClasses {
		class, example = "other", ""
		if e, ok := c.byClass[class]; ok {
			e.Count += n
			return
		}
	}
	c.byClass[class] = &result.ErrorClass{Class: class, Count: n, Example: example}
}

func (c *classTally) merge(o *classTally) {
	for _, e := range o.list() {
		c.addN(e.Class, e.Count, e.Example)
	}
}

// list is the classes, the most frequent first (ties by name).
func (c *classTally) list() []result.ErrorClass {
	out := make([]result.ErrorClass, 0, len(c.byClass))
	for _, e := range c.byClass {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Class < out[j].Class
	})
	return out
}

// dominant says which class of failure dominates, with its count and an
// example: "dominant error: connection refused (443920 of 443982), e.g.
// …". "" without failures.
func (c *classTally) dominant() string {
	l := c.list()
	if len(l) == 0 {
		return ""
	}
	d := l[0]
	s := fmt.Sprintf("dominant error: %s (%d of %d)", d.Class, d.Count, c.total)
	if d.Example != "" {
		s += ", e.g. " + d.Example
	}
	return s
}

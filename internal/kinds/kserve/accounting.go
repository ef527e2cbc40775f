package kserve

import (
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/procacct"
)

var _ kinds.Accounted = (*server)(nil)

// Accounting is the embedded server's own accounting of its model
// threads; a server reached over the network has none here.
func (s *server) Accounting() (procacct.Source, bool) {
	if s.ref == nil {
		return nil, false
	}
	return s.ref.Accounting(), true
}

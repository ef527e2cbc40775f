package scenario

import (
	"os"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

func resolveModels(s *Scenario, c *collector, r *resolved, dir string) {
	seen := map[string]int{}
	for i, m := range s.Models {
		p := path{"models", i}
		server, named := "", true
		if len(r.servers) > 0 {
			server, m.Name, named = r.modelServer(c, p.child("name"), m.Name)
		}
		alias := m.Alias
		aliasPath := p.child("alias")
		if alias == "" {
			alias = m.Name
			aliasPath = p.child("name")
		}
		if server != "" {
			alias = server + "/" + alias
		}
		if j, dup := seen[alias]; dup && named {
			c.at(aliasPath, "alias `%s` is already used by models[%d]; give each model a distinct alias", alias, j)
		} else if named {
			seen[alias] = i
		}
		batch := m.BatchSize
		if batch == 0 {
			batch = 1
		}
		if m.FloatTolerance != 0 && !m.ValidateOutputs {
			c.at(p.child("float_tolerance"), "has no effect without validate_outputs: true")
		}
		pm := plan.Model{
			Alias:                   alias,
			Server:                  server,
			Name:                    m.Name,
			Version:                 m.Version,
			Validate:                m.ValidateOutputs,
			FloatTolerance:          m.FloatTolerance,
			Sequence:                m.Sequence,
			SequenceLength:          m.SequenceLength,
			SequenceLengthVariation: m.SequenceLengthVariation,
			Input:                   resolveInput(m, c, p.child("input_data"), dir),
			Where:                   c.where(p.child("name")),
		}
		if m.SequenceLength != 0 && !m.Sequence {
			c.atKey(p.child("sequence_length"), "applies only to a sequence model (sequence: true)")
		}
		if m.SequenceLengthVariation != 0 && !m.Sequence {
			c.atKey(p.child("sequence_length_variation"), "applies only to a sequence model (sequence: true)")
		}
		if m.MaxErrorRate != "" {
			v := parseErrorRate(m.MaxErrorRate, p.child("max_error_rate"), c)
			pm.MaxErrorRate = &v
		}
		r.models = append(r.models, pm)
		r.batch = append(r.batch, batch)
		r.shapes = append(r.shapes, m.Shapes)
	}
}

// resolveInput decides the input source; a path is a JSON input-data file
// or a directory of raw binaries, told apart by stat.
func resolveInput(m Model, c *collector, p path, dir string) plan.Input {
	in := plan.Input{Kind: "random", StringLength: m.StringLength, StringData: m.StringData}
	if in.StringLength == 0 {
		in.StringLength = DefaultStringLength
	}
	if len(m.InputData) == 0 {
		return in
	}
	if len(m.InputData) == 1 && (m.InputData[0] == "random" || m.InputData[0] == "zero") {
		in.Kind = m.InputData[0]
		return in
	}
	list := len(m.InputData) > 1
	for i, f := range m.InputData {
		ep := p
		if list {
			ep = p.child(i)
		}
		if f == "random" || f == "zero" {
			c.at(ep, "%q cannot be mixed with input files", f)
			continue
		}
		full := rel(dir, f)
		st, err := os.Stat(full)
		switch {
		case err != nil:
			c.at(ep, "input data %s: %v", f, unwrapPathError(err))
			continue
		case st.IsDir() && list:
			c.at(ep, "%s is a directory; a list may hold only JSON input-data files", f)
			continue
		case st.IsDir():
			in.Kind = "dir"
		default:
			in.Kind = "json"
		}
		in.Paths = append(in.Paths, full)
	}
	return in
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// modelServer splits a models[].name written server/model under servers:.
// A name without a server is the only server's, and a mistake when there
// are several: the same model on two servers is two arms.
// ok is false when the name is wrong (and reported).
func (r *resolved) modelServer(c *collector, p path, name string) (server, model string, ok bool) {
	srv, model, qualified := strings.Cut(name, "/")
	if !qualified {
		if len(r.servers) == 1 {
			return r.servers[0].Name, name, true
		}
		c.at(p, "`%s` names no server; with several servers write server/model (servers: %s)", name, strings.Join(r.serverNames(), ", "))
		return "", name, false
	}
	if !r.hasServer(srv) {
		c.at(p, "unknown server `%s` in `%s`%s", srv, name, suggestOrListServers(srv, r.serverNames()))
		return "", model, false
	}
	if model == "" {
		c.at(p, "`%s` names no model after the server", name)
		return srv, model, false
	}
	return srv, model, true
}

func (r *resolved) serverNames() []string {
	out := make([]string, len(r.servers))
	for i, s := range r.servers {
		out[i] = s.Name
	}
	return out
}

func (r *resolved) hasServer(name string) bool {
	for _, s := range r.servers {
		if s.Name == name {
			return true
		}
	}
	return false
}

func suggestOrListServers(word string, known []string) string {
	if s := suggest(word, known); s != "" {
		return s + "; servers: " + strings.Join(known, ", ")
	}
	return "; servers: " + strings.Join(known, ", ")
}

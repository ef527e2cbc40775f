package agentpods

import (
	"fmt"
	"strings"
)

// CheckSelector accepts the label selectors --agent-pods takes: labels
// key=value separated by commas, each key a Kubernetes qualified name
// (an optional DNS-subdomain prefix and '/', then a name of at most 63
// characters) and each value a label value. That is a subset of
// Kubernetes' selector grammar, enough to pick a Job's pods; the rest
// (!=, in, notin, existence) is refused here rather than by the API
// server in the middle of a run.
func CheckSelector(s string) error {
	if s == "" {
		return fmt.Errorf("an empty selector would pick every pod of the namespace")
	}
	for _, term := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(term, "=")
		if !ok || strings.HasPrefix(v, "=") || strings.HasSuffix(k, "!") {
			return fmt.Errorf("%q: give labels as key=value, separated by commas", term)
		}
		if err := qualifiedName(k); err != nil {
			return fmt.Errorf("%q: label key %w", term, err)
		}
		if err := labelValue(v); err != nil {
			return fmt.Errorf("%q: label value %w", term, err)
		}
	}
	return nil
}

// qualifiedName is [prefix/]name: the prefix a DNS subdomain, the name
// 1-63 characters, alphanumeric at both ends, '-', '_' and '.' inside.
func qualifiedName(k string) error {
	name := k
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		prefix := k[:i]
		name = k[i+1:]
		if err := dnsSubdomain(prefix); err != nil {
			return fmt.Errorf("prefix %q: %w", prefix, err)
		}
	}
	if name == "" {
		return fmt.Errorf("%q: no name", k)
	}
	return labelValue(name)
}

// labelValue is empty, or 1-63 characters of [A-Za-z0-9-_.], alphanumeric
// at both ends.
func labelValue(v string) error {
	if v == "" {
		return nil
	}
	if len(v) > 63 {
		return fmt.Errorf("%q: longer than 63 characters", v)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(v)-1 || c != '-' && c != '_' && c != '.') {
			return fmt.Errorf("%q: letters, digits, '-', '_' and '.', beginning and ending with a letter or digit", v)
		}
	}
	return nil
}

// dnsSubdomain is RFC 1123: lower-case labels joined by dots, 253 at most.
func dnsSubdomain(s string) error {
	if s == "" || len(s) > 253 {
		return fmt.Errorf("not a DNS subdomain (1-253 characters)")
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("not a DNS subdomain")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("not a DNS subdomain (lower-case letters, digits, '-' and '.')")
			}
		}
	}
	return nil
}

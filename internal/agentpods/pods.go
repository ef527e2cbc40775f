// Package agentpods reads, from inside a Kubernetes pod, the pods of a
// distributed run's agents and says why agents the coordinator waits for
// are not there: never scheduled (and the scheduler's reason), their
// image not pulled, their container failed. A coordinator sees only the
// agents that reach it; an agent that never ran is a question only the
// API server can answer.
//
// The pure part (Explain) reads pods as the API server lists them; the
// client (InCluster) lists them with the pod's service-account token;
// Watch polls while the coordinator waits and logs what changed. No
// k8s.io client library: it would add megabytes to the binary for one
// GET.
package agentpods

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Pod is the part of a core/v1 Pod read here, with the API's field
// names.
type Pod struct {
	Metadata struct {
		Name              string            `json:"name"`
		Annotations       map[string]string `json:"annotations"`
		DeletionTimestamp string            `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase             string            `json:"phase"`
		Reason            string            `json:"reason"`
		Message           string            `json:"message"`
		Conditions        []condition       `json:"conditions"`
		ContainerStatuses []containerStatus `json:"containerStatuses"`
	} `json:"status"`
}

type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type containerStatus struct {
	Name  string `json:"name"`
	State struct {
		Waiting *struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"waiting"`
		Terminated *struct {
			ExitCode int    `json:"exitCode"`
			Reason   string `json:"reason"`
			Message  string `json:"message"`
		} `json:"terminated"`
	} `json:"state"`
}

// PodList is a core/v1 PodList.
type PodList struct {
	Items []Pod `json:"items"`
}

// IndexAnnotation is where the Job controller writes an Indexed Job
// pod's completion index: the agent's index.
const IndexAnnotation = "batch.kubernetes.io/job-completion-index"

// Finding is one reason some agents are missing, with the agents it
// holds for.
type Finding struct {
	// State is what happened, as the coordinator logs it while it waits
	// ("not scheduled yet"); Final is the same when it gave up ("never
	// scheduled").
	State, Final string
	// Detail is Kubernetes' own words (the scheduler's message, the
	// image pull error), clipped and escaped.
	Detail  string
	Indexes []int
	Pods    []string
}

// startingUp are container waiting reasons of a pod on its way up.
var startingUp = map[string]bool{"ContainerCreating": true, "PodInitializing": true}

// Explain says why agents of indexes 0 … agents−1 are not running, from
// their pods: those the scheduler could not place, those whose
// container waits for something other than starting (an image that
// cannot be pulled, a missing Secret), those that ended. Running pods,
// pods on their way up and pods being deleted say nothing. Findings
// with the same state and detail are one, over their indexes; they come
// in order of their lowest index.
func Explain(pods []Pod, agents int) []Finding {
	type key struct{ state, detail string }
	byKey := map[key]*Finding{}
	var order []key
	for _, p := range pods {
		idx, err := strconv.Atoi(p.Metadata.Annotations[IndexAnnotation])
		if err != nil || idx < 0 || idx >= agents || p.Metadata.DeletionTimestamp != "" {
			continue
		}
		state, final, detail := podState(p)
		if state == "" {
			continue
		}
		k := key{state, clean(detail)}
		f := byKey[k]
		if f == nil {
			f = &Finding{State: state, Final: final, Detail: k.detail}
			byKey[k] = f
			order = append(order, k)
		}
		f.Indexes = append(f.Indexes, idx)
		f.Pods = append(f.Pods, clean(p.Metadata.Name))
	}
	out := make([]Finding, 0, len(order))
	for _, k := range order {
		f := byKey[k]
		sort.Sort(byIndex{f})
		out = append(out, *f)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Indexes[0] < out[j].Indexes[0] })
	return out
}

// podState is what keeps a pod's agent away, in the present and as a
// final word, with Kubernetes' detail; "" when nothing does (yet).
func podState(p Pod) (state, final, detail string) {
	switch p.Status.Phase {
	case "Pending":
		for _, c := range p.Status.Conditions {
			if c.Type == "PodScheduled" && c.Status == "False" {
				return "not scheduled yet", "never scheduled", c.Message
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && !startingUp[w.Reason] {
				return "waiting (" + w.Reason + ")", "never started (" + w.Reason + ")", w.Message
			}
		}
	case "Failed", "Succeeded":
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil {
				s := fmt.Sprintf("ended (exit %d", t.ExitCode)
				if t.Reason != "" && t.Reason != "Error" && t.Reason != "Completed" {
					s += ", " + t.Reason
				}
				s += ")"
				return s, s, t.Message
			}
		}
		s := strings.ToLower(p.Status.Phase)
		if p.Status.Reason != "" {
			s += " (" + p.Status.Reason + ")"
		}
		return s, s, p.Status.Message
	}
	return "", "", ""
}

type byIndex struct{ f *Finding }

func (b byIndex) Len() int           { return len(b.f.Indexes) }
func (b byIndex) Less(i, j int) bool { return b.f.Indexes[i] < b.f.Indexes[j] }
func (b byIndex) Swap(i, j int) {
	b.f.Indexes[i], b.f.Indexes[j] = b.f.Indexes[j], b.f.Indexes[i]
	b.f.Pods[i], b.f.Pods[j] = b.f.Pods[j], b.f.Pods[i]
}

// Text is the finding in a line: "agent index(es) 0-1 not scheduled
// yet (pods p-0-x, p-1-y): 0/1 nodes are available: 1 Insufficient
// cpu." With final, its final word.
func (f Finding) Text(final bool) string {
	state := f.State
	if final {
		state = f.Final
	}
	s := "agent index(es) " + Ranges(f.Indexes) + " " + state + " (" + podNames(f.Pods) + ")"
	if f.Detail != "" {
		s += ": " + f.Detail
	}
	return s
}

// maxNamed is how many pods a line names before it counts the rest.
const maxNamed = 3

func podNames(pods []string) string {
	if len(pods) == 1 {
		return "pod " + pods[0]
	}
	if len(pods) <= maxNamed {
		return "pods " + strings.Join(pods, ", ")
	}
	return fmt.Sprintf("pods %s and %d more", strings.Join(pods[:maxNamed], ", "), len(pods)-maxNamed)
}

// Ranges writes sorted indexes compactly: 0-3, 7, 9-10.
func Ranges(idx []int) string {
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(idx[i]))
		default:
			parts = append(parts, strconv.Itoa(idx[i])+"-"+strconv.Itoa(idx[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// maxDetail bounds Kubernetes' words in a line (a scheduler's message
// over many nodes runs long).
const maxDetail = 400

// clean escapes control characters and clips: the text comes from the
// API server, and a log line must stay one line.
func clean(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
		if b.Len() > maxDetail {
			out := b.String()
			cut := maxDetail
			for cut > 0 && !utf8.RuneStart(out[cut]) {
				cut--
			}
			return out[:cut] + "…"
		}
	}
	return b.String()
}

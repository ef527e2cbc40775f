package agentpods

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/labels"
)

// cluster is an API server's pods endpoint on 127.0.0.1, and the
// service-account directory a pod would have for it.
func cluster(t *testing.T, handler http.HandlerFunc) (dir string, getenv func(string) string) {
	t.Helper()
	srv := httptest.NewTLSServer(handler)
	t.Cleanup(srv.Close)
	dir = t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for name, body := range map[string][]byte{"ca.crt": ca, "token": []byte("tok-1\n"), "namespace": []byte("perf")} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	env := map[string]string{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
	return dir, func(k string) string { return env[k] }
}

// The client asks for the selected pods of its own namespace that are
// neither running nor done, as the pod's service account (the token
// read anew each time: the kubelet rotates it), over TLS verified with
// the cluster's CA; a refusal comes back in the API server's words.
func TestClient(t *testing.T) {
	list, err := os.ReadFile("testdata/unschedulable.json")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	dir, getenv := cluster(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") == "Bearer tok-2" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods is forbidden: User \"system:serviceaccount:perf:default\" cannot list resource \"pods\" in API group \"\" in the namespace \"perf\"","reason":"Forbidden","code":403}`)
			return
		}
		w.Write(list)
	})
	c, err := InCluster(getenv, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pods, err := c.Pods(ctx, "app.kubernetes.io/instance=perfscen,app.kubernetes.io/component=agent")
	if err != nil || len(pods) != 2 || pods[1].Metadata.Name != "perfscen-agents-1-mswhk" {
		t.Fatalf("pods %+v, %v", pods, err)
	}
	want := "/api/v1/namespaces/perf/pods?fieldSelector=status.phase%21%3DRunning%2Cstatus.phase%21%3DSucceeded&labelSelector=app.kubernetes.io%2Finstance%3Dperfscen%2Capp.kubernetes.io%2Fcomponent%3Dagent Bearer tok-1"
	if seen[0] != want {
		t.Errorf("request\n%s\nwant\n%s", seen[0], want)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("tok-2"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = c.Pods(ctx, "a=b")
	if err == nil || err.Error() != `listing pods in perf: 403 Forbidden: pods is forbidden: User "system:serviceaccount:perf:default" cannot list resource "pods" in API group "" in the namespace "perf"` {
		t.Errorf("refused: %v", err)
	}

	// Outside a pod, or without a token mounted: said so.
	if _, err := InCluster(func(string) string { return "" }, dir); err == nil || !strings.Contains(err.Error(), "not in a Kubernetes pod") {
		t.Errorf("outside a pod: %v", err)
	}
	if _, err := InCluster(getenv, t.TempDir()); err == nil || !strings.Contains(err.Error(), "automountServiceAccountToken") {
		t.Errorf("no token mounted: %v", err)
	}
}

// The watcher warns once per cause, as soon as the pods show it, and
// again when more agents share it; an API server that refuses is said
// once; the final word is in the past tense.
func TestWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		all := load(t, "unschedulable.json")
		var mu sync.Mutex
		pods, fail := all[:1], error(nil)
		set := func(p []Pod, err error) {
			mu.Lock()
			pods, fail = p, err
			mu.Unlock()
		}
		var log bytes.Buffer
		var logMu sync.Mutex
		w := &Watcher{Agents: 2, Wait: 10 * time.Minute, Interval: 5 * time.Second, Log: writerFunc(func(b []byte) {
			logMu.Lock()
			log.Write(b)
			logMu.Unlock()
		}), List: func(context.Context) ([]Pod, error) {
			mu.Lock()
			defer mu.Unlock()
			return pods, fail
		}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.Run(ctx)
		}()
		synctest.Wait()
		time.Sleep(12 * time.Second) // two more lists, nothing new
		set(all, nil)
		time.Sleep(5 * time.Second)
		set(nil, fmt.Errorf("listing pods in perf: 403 Forbidden"))
		time.Sleep(15 * time.Second)
		cancel()
		<-done
		got := log.String()
		want := "perfscen: warning: agent index(es) 0 not scheduled yet (pod perfscen-agents-0-rk6hq): 0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.; the coordinator waits for every agent until --agent-wait 10m0s ends\n" +
			"perfscen: warning: agent index(es) 0-1 not scheduled yet (pods perfscen-agents-0-rk6hq, perfscen-agents-1-mswhk): 0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.; the coordinator waits for every agent until --agent-wait 10m0s ends\n" +
			"perfscen: warning: cannot read the agents' pods, so a missing agent cannot be explained: listing pods in perf: 403 Forbidden\n"
		if got != want {
			t.Errorf("log:\n%s\nwant:\n%s", got, want)
		}
		set(all, nil)
		if f := w.Final(context.Background()); !strings.HasPrefix(f, "agent index(es) 0-1 never scheduled (pods") {
			t.Errorf("final: %q", f)
		}
	})
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

// The selectors --agent-pods takes: key=value labels. What is accepted
// Kubernetes parses to the same equality requirements; the rest of its
// grammar is refused with a reason.
func TestCheckSelector(t *testing.T) {
	for _, tc := range []struct{ sel, err string }{
		{"app.kubernetes.io/name=perfscen,app.kubernetes.io/instance=perfscen,app.kubernetes.io/component=agent", ""},
		{"job-name=perfscen-agents", ""},
		{"a=", ""},
		{"", "an empty selector"},
		{"a!=b", "give labels as key=value"},
		{"a==b", "give labels as key=value"},
		{"a in (b)", "give labels as key=value"},
		{"a", "give labels as key=value"},
		{"Bad_Prefix/a=b", `prefix "Bad_Prefix"`},
		{"a=b c", "label value"},
		{"a=" + strings.Repeat("x", 64), "longer than 63"},
	} {
		err := CheckSelector(tc.sel)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckSelector(%q) = %v, want %q", tc.sel, err, tc.err)
		}
	}
}

func FuzzCheckSelector(f *testing.F) {
	for _, s := range []string{"a=b", "a=b,c=d", "x.io/a=b", "a!=b", "a in (b)", "=b", "a=b=c", "a/b/c=d", "-a=b", "a=-b", "A=B", "a.b-c_d=E.f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckSelector(s) != nil {
			return
		}
		sel, err := labels.Parse(s)
		if err != nil {
			t.Fatalf("%q: accepted here, Kubernetes says %v", s, err)
		}
		reqs, _ := sel.Requirements()
		terms := map[string]int{}
		for _, term := range strings.Split(s, ",") {
			terms[term]++
		}
		for _, r := range reqs {
			vals := r.Values()
			v, _ := vals.PopAny()
			if r.Operator() != "=" || vals.Len() != 0 || terms[r.Key()+"="+v] == 0 {
				t.Fatalf("%q: requirement %v is not one of its terms", s, r)
			}
			terms[r.Key()+"="+v]--
		}
		for term, n := range terms {
			if n != 0 {
				t.Fatalf("%q: term %q has no requirement", s, term)
			}
		}
	})
}

package agentpods

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ServiceAccountDir is where Kubernetes mounts a pod's service-account
// token, the cluster's CA and the pod's namespace.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// maxList bounds a pod list's size: 500 pending pods are about 3 MB.
const maxList = 64 << 20

// Client lists pods of the pod's own namespace through the API server,
// as the pod's service account.
type Client struct {
	base      string // https://host:port
	tokenFile string
	namespace string
	http      *http.Client
}

// InCluster is the client of the pod this process runs in: the API
// server from KUBERNETES_SERVICE_HOST and _PORT (which Kubernetes sets in
// every container), the token, CA and namespace from dir
// (ServiceAccountDir).
func InCluster(getenv func(string) string, dir string) (*Client, error) {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not in a Kubernetes pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	ns, err := os.ReadFile(filepath.Join(dir, "namespace"))
	if err != nil {
		return nil, fmt.Errorf("the pod's namespace: %w (is a service account token mounted? automountServiceAccountToken)", err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("the cluster's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no PEM certificate", filepath.Join(dir, "ca.crt"))
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		Proxy: nil, ResponseHeaderTimeout: 10 * time.Second}
	return &Client{base: "https://" + net.JoinHostPort(host, port), tokenFile: filepath.Join(dir, "token"),
		namespace: strings.TrimSpace(string(ns)), http: &http.Client{Transport: tr, Timeout: 20 * time.Second}}, nil
}

// Namespace is the pod's namespace, where the client lists.
func (c *Client) Namespace() string { return c.namespace }

// Pods lists the pods selector picks in the namespace that are not
// running or done: the ones that can say why an agent is missing (a
// running agent is joining; the coordinator knows it).
func (c *Client) Pods(ctx context.Context, selector string) ([]Pod, error) {
	// The token is read for every request: the kubelet rotates it.
	token, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return nil, fmt.Errorf("the service account token: %w", err)
	}
	q := url.Values{"labelSelector": {selector}, "fieldSelector": {"status.phase!=Running,status.phase!=Succeeded"}}
	u := c.base + "/api/v1/namespaces/" + url.PathEscape(c.namespace) + "/pods?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("listing pods in %s: %w", c.namespace, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxList+1))
	if err != nil {
		return nil, fmt.Errorf("listing pods in %s: %w", c.namespace, err)
	}
	if resp.StatusCode != http.StatusOK {
		// The API server says why in a Status object.
		var st struct {
			Message string `json:"message"`
		}
		msg := resp.Status
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			msg += ": " + clean(st.Message)
		}
		return nil, fmt.Errorf("listing pods in %s: %s", c.namespace, msg)
	}
	if len(body) > maxList {
		return nil, fmt.Errorf("listing pods in %s: the list is over %d MiB", c.namespace, maxList>>20)
	}
	return DecodeList(body)
}

// DecodeList reads a PodList as the API server writes it.
func DecodeList(b []byte) ([]Pod, error) {
	var l PodList
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("a pod list the API server sent: %w", err)
	}
	return l.Items, nil
}

package fleet

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// ServerTLS is the coordinator's TLS: its certificate and key, and with
// clientCA, mutual TLS (agents must present a certificate it signed),
// alone or on top of the token. Its messages name perfscen run's flags.
func ServerTLS(cert, key, clientCA string) (*tls.Config, error) {
	if cert == "" && key == "" && clientCA == "" {
		return nil, nil
	}
	if cert == "" || key == "" {
		return nil, fmt.Errorf("--agents-tls-cert and --agents-tls-key go together (--agents-tls-client-ca needs both)")
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("--agents-tls-cert: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if clientCA != "" {
		pool, err := certPool(clientCA)
		if err != nil {
			return nil, fmt.Errorf("--agents-tls-client-ca: %w", err)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// ClientTLS is an agent's TLS: ca verifies the coordinator (empty: the
// system's roots), cert and key authenticate the agent for mutual TLS.
// Nothing given: plaintext (loopback, or a network the operator trusts;
// the token still decides who takes part).
func ClientTLS(ca, cert, key, serverName string) (*tls.Config, error) {
	if ca == "" && cert == "" && key == "" && serverName == "" {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}
	if ca != "" {
		pool, err := certPool(ca)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		cfg.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func certPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificates found", path)
	}
	return pool, nil
}

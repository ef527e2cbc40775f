package client

import "crypto/tls"

// tlsConfigDefault is used (cloned) when the URL scheme asks for TLS but no
// configuration was given: system roots, server name from the URL.
var tlsConfigDefault = tls.Config{MinVersion: tls.VersionTLS12}

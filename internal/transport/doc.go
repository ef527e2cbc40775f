// Package transport holds what every service kind's client shares about
// reaching a server: the error kinds (unreachable, an error the server
// sent, a reply that makes no sense) that the engine counts and reports.
package transport

package plan

import "testing"

func TestParseProtocol(t *testing.T) {
	tests := []struct {
		in      string
		want    Protocol
		wantErr string
	}{
		{"http", ProtocolHTTP, ""},
		{"grpc", ProtocolGRPC, ""},
		{"", "", `protocol "" is neither http nor grpc`},
		{"GRPC", "", `protocol "GRPC" is neither http nor grpc`},
		{"https", "", `protocol "https" is neither http nor grpc`},
	}
	for _, tt := range tests {
		got, err := ParseProtocol(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseProtocol(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseProtocol(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

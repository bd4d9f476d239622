// Golden vectors for qkcm's bootstrap-signer and token-cleaner controllers, from upstream's own code
// (k8s.io/cluster-bootstrap v0.34.4): the detached JWS that jws.ComputeDetachedSignature gives (and
// kubeadm join's discovery verifies with jws.DetachedTokenIsValid), and how secrets.GetExpiration
// reads a bootstrap token's `expiration` (time.Parse with time.RFC3339) against a fixed now. Nothing
// here is part of qkcm at runtime.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	bootstrapsecretutil "k8s.io/cluster-bootstrap/util/secrets"
)

// One input line: {"content","tokenID","tokenSecret"} for a signature, or {"expiration","now"} for
// GetExpiration (with what time.Parse read: parseError, or unixSeconds and nanos).
type input struct {
	Content     *string `json:"content,omitempty"`
	TokenID     string  `json:"tokenID,omitempty"`
	TokenSecret string  `json:"tokenSecret,omitempty"`
	Expiration  *string `json:"expiration,omitempty"`
	Now         string  `json:"now,omitempty"`
}

type output struct {
	input
	Signature      string `json:"signature,omitempty"`
	Valid          *bool  `json:"valid,omitempty"`
	ParseError     *bool  `json:"parseError,omitempty"`
	UnixSeconds    *int64 `json:"unixSeconds,omitempty"`
	Nanos          *int   `json:"nanos,omitempty"`
	RemainingNanos *int64 `json:"remainingNanos,omitempty"`
	Expired        *bool  `json:"expired,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var i input
		if err := json.Unmarshal(in.Bytes(), &i); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		o := output{input: i}
		switch {
		case i.Content != nil:
			sig, err := jws.ComputeDetachedSignature(*i.Content, i.TokenID, i.TokenSecret)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			o.Signature = sig
			valid := jws.DetachedTokenIsValid(sig, *i.Content, i.TokenID, i.TokenSecret)
			o.Valid = &valid
		case i.Expiration != nil:
			now, err := time.Parse(time.RFC3339Nano, i.Now)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			secret := &v1.Secret{Data: map[string][]byte{bootstrapapi.BootstrapTokenExpirationKey: []byte(*i.Expiration)}}
			remaining, expired := bootstrapsecretutil.GetExpiration(secret, now)
			// what time.Parse(time.RFC3339, ...) read, to tell a parse error from an expired time
			parsed, perr := time.Parse(time.RFC3339, *i.Expiration)
			parseError := perr != nil
			o.ParseError = &parseError
			if !parseError {
				secs, nanos := parsed.Unix(), parsed.Nanosecond()
				o.UnixSeconds, o.Nanos = &secs, &nanos
			}
			r := int64(remaining)
			o.RemainingNanos = &r
			o.Expired = &expired
		default:
			fmt.Fprintln(os.Stderr, "input line has neither content nor expiration")
			os.Exit(1)
		}
		if err := enc.Encode(o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

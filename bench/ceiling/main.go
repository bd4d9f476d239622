// ceiling measures the raw pod-create rate the API server absorbs from a plain client with no QPS
// limit: N pods POSTed by C concurrent workers over HTTP/2 with the cluster's admin client
// certificate. Standard library only (no client-go), so it builds offline.
//
// Output: one JSON line {"pods":N,"concurrency":C,"seconds":S,"rate":N/S,"errors":E}.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	server := flag.String("server", "", "API server URL")
	ca := flag.String("ca", "", "CA certificate file")
	cert := flag.String("cert", "", "client certificate file")
	key := flag.String("key", "", "client key file")
	ns := flag.String("namespace", "bench-ceiling", "namespace (must exist, with a default ServiceAccount)")
	n := flag.Int("n", 1000, "pods to create")
	c := flag.Int("c", 32, "concurrent workers")
	flag.Parse()

	pair, err := tls.LoadX509KeyPair(*cert, *key)
	check(err)
	pem, err := os.ReadFile(*ca)
	check(err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: *c,
	}
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	url := fmt.Sprintf("%s/api/v1/namespaces/%s/pods", *server, *ns)

	var next, errs int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := atomic.AddInt64(&next, 1)
				if i > int64(*n) {
					return
				}
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ceiling-%d","labels":{"app":"ceiling"}},`+
					`"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.10"}]}}`, i)
				resp, err := client.Post(url, "application/json", bytes.NewBufferString(body))
				if err != nil {
					atomic.AddInt64(&errs, 1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					atomic.AddInt64(&errs, 1)
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	out, _ := json.Marshal(map[string]any{"pods": *n, "concurrency": *c, "seconds": secs,
		"rate": float64(int64(*n)-errs) / secs, "errors": errs})
	fmt.Println(string(out))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

// A WebSocket echo server for bench/websocket.sh (issue 40), on
// github.com/coder/websocket (from the Go module proxy): Python cannot
// keep up with the clients measured, Go can. It listens on 127.0.0.1
// (port 0: the system's pick), prints "port N" first, answers every
// message with itself, and when its standard input closes prints the
// messages it received ("received N": the witness) and exits.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/coder/websocket"
)

var received atomic.Int64

func echo(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(16 << 20)
	ctx := context.Background()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		received.Add(1)
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
	}
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("port %d\n", ln.Addr().(*net.TCPAddr).Port)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		fmt.Printf("received %d\n", received.Load())
		os.Exit(0)
	}()
	http.Serve(ln, http.HandlerFunc(echo))
}

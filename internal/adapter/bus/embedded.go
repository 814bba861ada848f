package bus

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
)

// RandomPort asks StartEmbedded for a free port.
const RandomPort = server.RANDOM_PORT

// EmbeddedOptions configures an in-process nats-server.
type EmbeddedOptions struct {
	// Host is the address clients connect to. Default "127.0.0.1".
	Host string
	// Port is the client port. 0 or RandomPort: a free port (see
	// Embedded.Port). To restart on the same port, pass the previous Port.
	Port int
	// StoreDir is the JetStream storage directory. Required: directives
	// outlive a restart only on disk.
	StoreDir string
	// ServerName names the server in logs and monitoring. Default "regiment".
	ServerName string
	// Token, when set, is the token every client must present.
	Token string
	// Logger receives the server's log (Notice at Info; Fatal at Error, and
	// the process is not exited). Nil: the server does not log.
	Logger hclog.Logger
	// ReadyTimeout bounds the wait for the server to accept clients. Default 10s.
	ReadyTimeout time.Duration
}

// Embedded is a nats-server with JetStream running inside this process.
type Embedded struct {
	srv  *server.Server
	once sync.Once
}

// StartEmbedded starts a nats-server with JetStream and waits until it
// accepts clients. Call Shutdown to stop it.
func StartEmbedded(opts EmbeddedOptions) (*Embedded, error) {
	if opts.StoreDir == "" {
		return nil, errors.New("bus: start embedded nats: StoreDir is required")
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.Port == 0 {
		opts.Port = RandomPort
	}
	if opts.ServerName == "" {
		opts.ServerName = "regiment"
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 10 * time.Second
	}
	sopts := &server.Options{
		ServerName:    opts.ServerName,
		Host:          opts.Host,
		Port:          opts.Port,
		JetStream:     true,
		StoreDir:      opts.StoreDir,
		Authorization: opts.Token,
		NoSigs:        true, // signals belong to cmd
		NoLog:         opts.Logger == nil,
	}
	srv, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("bus: start embedded nats: %w", err)
	}
	if opts.Logger != nil {
		srv.SetLogger(serverLogger{opts.Logger}, opts.Logger.IsDebug(), opts.Logger.IsTrace())
	}
	srv.Start()
	if !srv.ReadyForConnections(opts.ReadyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("bus: start embedded nats on %s: not ready after %s",
			net.JoinHostPort(opts.Host, fmt.Sprint(opts.Port)), opts.ReadyTimeout)
	}
	if !srv.JetStreamEnabled() {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("bus: start embedded nats: jetstream not enabled (store %s)", opts.StoreDir)
	}
	return &Embedded{srv: srv}, nil
}

// ClientURL is the URL clients connect to, e.g. "nats://127.0.0.1:4222".
func (e *Embedded) ClientURL() string { return e.srv.ClientURL() }

// Port is the client port the server listens on.
func (e *Embedded) Port() int {
	if a, ok := e.srv.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// Shutdown stops the server and waits until it has stopped. Clients see a
// disconnect. It is idempotent.
func (e *Embedded) Shutdown() {
	e.once.Do(func() {
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
	})
}

// serverLogger adapts hclog to nats-server's Logger.
type serverLogger struct{ log hclog.Logger }

func (l serverLogger) Noticef(format string, v ...any) { l.log.Info(fmt.Sprintf(format, v...)) }
func (l serverLogger) Warnf(format string, v ...any)   { l.log.Warn(fmt.Sprintf(format, v...)) }
func (l serverLogger) Errorf(format string, v ...any)  { l.log.Error(fmt.Sprintf(format, v...)) }
func (l serverLogger) Debugf(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l serverLogger) Tracef(format string, v ...any)  { l.log.Trace(fmt.Sprintf(format, v...)) }

// Fatalf logs at Error; a library never exits the process.
func (l serverLogger) Fatalf(format string, v ...any) {
	l.log.Error(fmt.Sprintf(format, v...), "fatal", true)
}

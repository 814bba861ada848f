package testenv

import "syscall"

// sysProcAttr puts a child in its own process group and has the kernel kill it
// when the test binary dies (a panic or -timeout must not leak an apiserver).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

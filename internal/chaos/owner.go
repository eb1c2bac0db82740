package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Every node dials its peers from 127.0.0.1 with an ephemeral port, so a
// proxy cannot tell the nodes apart by address. It asks the kernel
// instead: /proc/net/tcp names the inode of the dialer's socket (local
// port = the accepted connection's remote port, remote port = the
// proxy's), and /proc/<pid>/fd of each node process holds "socket:[inode]"
// for the sockets that process owns.

// socketOwner returns the node id (a value of pids) whose process holds
// the dialing end of c, a connection accepted on loopback.
func socketOwner(c net.Conn, pids map[int]string) (string, error) {
	remote, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return "", fmt.Errorf("remote address %v is not TCP", c.RemoteAddr())
	}
	local, ok := c.LocalAddr().(*net.TCPAddr)
	if !ok {
		return "", fmt.Errorf("local address %v is not TCP", c.LocalAddr())
	}
	inode, err := socketInode(remote.Port, local.Port)
	if err != nil {
		return "", err
	}
	target := "socket:[" + inode + "]"
	for pid, id := range pids {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue // the process is gone (killed a moment ago)
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
			if err == nil && link == target {
				return id, nil
			}
		}
	}
	return "", fmt.Errorf("no node process holds the socket of port %d", remote.Port)
}

// socketInode finds the inode of the TCP socket whose local port is lport
// and remote port rport, in /proc/net/tcp or /proc/net/tcp6.
func socketInode(lport, rport int) (string, error) {
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		inode, err := findInode(file, lport, rport)
		if err != nil {
			return "", err
		}
		if inode != "" {
			return inode, nil
		}
	}
	return "", fmt.Errorf("no socket from port %d to port %d", lport, rport)
}

// findInode scans one /proc/net/tcp* table; "" when no line matches.
func findInode(file string, lport, rport int) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		if os.IsNotExist(err) {
			return "", nil
		}
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		if portOf(fields[1]) == lport && portOf(fields[2]) == rport {
			if fields[9] == "0" { // TIME_WAIT and the like: no process holds it
				return "", fmt.Errorf("the dialer closed its socket (port %d, state %s)", lport, fields[3])
			}
			return fields[9], nil
		}
	}
	return "", sc.Err()
}

// portOf reads the port of a /proc/net/tcp address, "0100007F:1F90".
func portOf(addr string) int {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return -1
	}
	p, err := strconv.ParseUint(addr[i+1:], 16, 16)
	if err != nil {
		return -1
	}
	return int(p)
}

package sockstat

import "golang.org/x/sys/unix"

func room(fd int) int {
	buf, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	if err != nil {
		return 0
	}
	queued, err := unix.IoctlGetInt(fd, unix.SIOCOUTQ)
	if err != nil {
		return 0
	}
	return max(buf/2-queued, 0)
}

func acked(fd int) (int64, error) {
	info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0, err
	}
	return int64(info.Bytes_acked), nil
}
